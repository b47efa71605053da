import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields } from '../audit/audit-event.js';
import { type Actor, assertPermitted, may } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, Forbidden, NotFound, Unprocessable } from '../shared/problems.js';
import { hasFilter, parseChoice, parseErrorListQuery } from './query.js';
import { type ActivityEntry, type ErrorNote, parseBulkTriage, parseNoteBody, parseTriageChange, type Triage, type TriageChange } from './triage.js';
import type { Selection, TriageRepository } from './triage.store.js';

type Query = Readonly<Record<string, string | string[] | undefined>>;

/** A triage as the audit trail compares it (its timestamps aside). */
const auditedTriage = (triage: Triage) => ({
  status: triage.status, assignee_id: triage.assignee_id, snoozed_until: triage.snoozed_until, snooze_occurrences: triage.snooze_occurrences, resolved_in_release: triage.resolved_in_release,
});

/**
 * Whether a user may be assigned errors: it exists, is not deleted, and may read errors. Wired near the
 * top (tracker/tracker.plugin.ts, from the users' store app/app.ts hands it): the tracker does not know users.
 */
export type Assignable = (userId: number) => Promise<boolean>;

/**
 * Error triage (docs/api.md#error-triage): who may do what, by permission. Reading triage, notes
 * and activity needs `infrastructure_errors.read`; changing triage `infrastructure_errors.triage`;
 * writing notes (and deleting one's own) `infrastructure_errors.notes`; deleting anyone's
 * `infrastructure_errors.notes.delete`. Administrators hold them all.
 */
export function triageService(repository: TriageRepository, clock: Clock, audit: AuditRecorder, assignable: Assignable) {
  const recordError = (actor: Actor, action: string, id: number | null, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'infrastructure_error', target_id: id, changes });
  const exists = async (id: number) => {
    if (!(await repository.exists(id))) throw new NotFound();
  };

  /** 422 naming assignee_id unless the change's assignee may be assigned errors. */
  const checkAssignee = async (change: TriageChange) => {
    if (typeof change.assignee_id !== 'number') return;
    if (await assignable(change.assignee_id)) return;
    const errors = new FieldErrors();
    errors.add('assignee_id', 'must be a user who may read infrastructure errors');
    errors.throwIfAny();
  };

  return {
    /** Wakes snoozes whose time has passed; undefined (no promise) while none is due (docs/api.md#snoozing). */
    wakeIfDue: () => repository.wakeIfDue(clock()),

    async get(actor: Actor, id: number): Promise<Triage> {
      assertPermitted(actor, 'infrastructure_errors.read');
      await repository.wakeIfDue(clock());
      const triage = await repository.find(id);
      if (!triage) throw new NotFound();
      return triage;
    },

    /** The triage of several errors (a page of a list), by id; an id that is not there is left out. */
    async triagesOf(actor: Actor, ids: readonly number[]): Promise<Map<number, Triage>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      await repository.wakeIfDue(clock());
      return repository.findMany(ids);
    },

    async change(actor: Actor, id: number, body: unknown): Promise<Triage> {
      assertPermitted(actor, 'infrastructure_errors.triage');
      const now = clock();
      const change = parseTriageChange(body, now);
      await checkAssignee(change);
      await repository.wakeIfDue(now);
      const before = await repository.find(id);
      if (before && change.in_next_release) {
        // Resolved in the next release: any release after the latest it was seen in (docs/api.md#resolved-in-a-release).
        const latest = await repository.latestRelease(id);
        if (latest === undefined) throw new Unprocessable({ in_next_release: ['needs an occurrence that carried a release (or give in_release)'] });
        change.in_release = latest;
        delete change.in_next_release;
      }
      const triage = await repository.change(id, change, actor.id, now);
      if (!triage || !before) throw new NotFound();
      await recordError(actor, 'infrastructure_error.triage', id, changedFields(auditedTriage(before), auditedTriage(triage)));
      return triage;
    },

    /**
     * One change to many errors: those `ids` names, or those the list's filters in the query select
     * (with none, only when the query says `all=true`); answers how many it changed.
     */
    async changeMany(actor: Actor, query: Query, body: unknown): Promise<number> {
      assertPermitted(actor, 'infrastructure_errors.triage');
      const now = clock();
      const { change, ids } = parseBulkTriage(body, now);
      if (change.in_next_release) throw new Unprocessable({ in_next_release: ['is given for one error at a time (each has its own latest release); give in_release'] });
      const { filters } = parseErrorListQuery(query, { deletion: true, viewerId: actor.id, now: clock() });
      const all = parseChoice(query, 'all', ['true', 'false'], 'false') === 'true';
      const errors = new FieldErrors();
      if (ids !== undefined && (hasFilter(filters) || all)) errors.add('ids', 'give ids or filters in the query, not both');
      if (ids === undefined && !hasFilter(filters) && !all) errors.add('all', 'must be true to change every error (or give ids or a filter)');
      errors.throwIfAny();
      await checkAssignee(change);
      await repository.wakeIfDue(now);
      const selection: Selection = ids !== undefined ? { ids } : { filters };
      if (ids !== undefined && ids.length === 0) return 0;
      const changed = await repository.changeMany(selection, change, actor.id, now);
      await recordError(actor, 'infrastructure_error.triage_many', null, { changed, change, ...(ids !== undefined ? { ids } : { filters: query }) });
      return changed;
    },

    async notes(actor: Actor, id: number, limit: number, offset: number): Promise<Page<ErrorNote>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      await exists(id);
      return repository.notes(id, limit, offset);
    },

    async addNote(actor: Actor, id: number, body: unknown): Promise<ErrorNote> {
      assertPermitted(actor, 'infrastructure_errors.notes');
      const text = parseNoteBody(body);
      const note = await repository.addNote(id, actor.id, text, clock());
      if (!note) throw new NotFound();
      await recordError(actor, 'infrastructure_error.note.create', id, { note_id: note.id, body: note.body });
      return note;
    },

    /** By its author (with infrastructure_errors.notes) or a holder of infrastructure_errors.notes.delete. */
    async deleteNote(actor: Actor, id: number, noteId: number): Promise<void> {
      assertPermitted(actor, 'infrastructure_errors.read');
      const note = await repository.findNote(id, noteId);
      if (!note) throw new NotFound();
      const own = actor.id !== null && note.author_id === actor.id && may(actor, 'infrastructure_errors.notes');
      if (!own && !may(actor, 'infrastructure_errors.notes.delete')) throw Forbidden.needs('infrastructure_errors.notes.delete');
      if (!(await repository.deleteNote(id, noteId, actor.id, clock()))) throw new NotFound();
      await recordError(actor, 'infrastructure_error.note.delete', id, { note_id: noteId, author_id: note.author_id });
    },

    async activity(actor: Actor, id: number, limit: number, offset: number): Promise<Page<ActivityEntry>> {
      assertPermitted(actor, 'infrastructure_errors.read');
      await exists(id);
      await repository.wakeIfDue(clock());
      return repository.activity(id, limit, offset);
    },

    /** The retention job's part (docs/operations.md#retention): snoozes whose time has passed wake. */
    wakeSnoozed: () => repository.wakeSnoozed(clock()),
  };
}

export type TriageService = ReturnType<typeof triageService>;
