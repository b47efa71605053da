import type { AuditRecorder } from '../audit/audit-trail.js';
import { changedFields, fieldsOf } from '../audit/audit-event.js';
import { type Actor, assertPermitted, may } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/page.js';
import { Forbidden, NotFound } from '../shared/problems.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import { type Change, inScope, readChange, SUSPECT_WINDOW_MS } from './change.js';
import type { ChangesRepository } from './changes.store.js';

/** The changes a suspect list considers at most: the latest started in its window (docs/changes.md#suspect-changes). */
export const SUSPECT_CANDIDATES = 200;

/**
 * Changes to the cloud (docs/changes.md): changes.read sees them, changes.manage records, edits and
 * deletes them, changes.create only records them (a CD pipeline's write-only key). The suspects of an
 * error also need infrastructure_errors.read, checked by the tracker as it finds the error.
 */
export function changesService(repository: ChangesRepository, clock: Clock, audit: AuditRecorder, tracker: Pick<TrackerService, 'find'>) {
  const recordChange = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'change', target_id: id, changes });

  async function find(actor: Actor, id: number): Promise<Change> {
    assertPermitted(actor, 'changes.read');
    const change = await repository.find(id);
    if (!change) throw new NotFound();
    return change;
  }

  return {
    async list(actor: Actor, limit: number, offset: number): Promise<Page<Change>> {
      assertPermitted(actor, 'changes.read');
      return repository.page(limit, offset);
    },

    get: find,

    async create(actor: Actor, body: unknown): Promise<Change> {
      if (!may(actor, 'changes.manage') && !may(actor, 'changes.create')) throw Forbidden.needs('changes.manage', 'changes.create');
      const now = clock();
      const change = await repository.create(readChange(body, undefined, now), actor.id, now);
      await recordChange(actor, 'change.create', change.id, fieldsOf(change));
      return change;
    },

    async update(actor: Actor, id: number, body: unknown): Promise<Change> {
      assertPermitted(actor, 'changes.manage');
      const before = await repository.find(id);
      if (!before) throw new NotFound();
      const now = clock();
      const change = await repository.update(id, readChange(body, before, now), now);
      if (!change) throw new NotFound();
      await recordChange(actor, 'change.update', id, changedFields(before, change));
      return change;
    },

    async remove(actor: Actor, id: number): Promise<void> {
      assertPermitted(actor, 'changes.manage');
      const before = await repository.find(id);
      if (!before || !(await repository.remove(id))) throw new NotFound();
      await recordChange(actor, 'change.delete', id, { kind: before.kind, title: before.title });
    },

    /**
     * The changes in error `errorId`'s scope that ran when it was first seen or ended within the hour
     * before, by id (docs/changes.md#suspect-changes).
     */
    async suspects(actor: Actor, errorId: number, limit: number, offset: number): Promise<Page<Change>> {
      assertPermitted(actor, 'changes.read');
      const error = await tracker.find(actor, errorId);
      const first = error.created_at;
      const candidates = await repository.runningBetween(new Date(first.getTime() - SUSPECT_WINDOW_MS), first, SUSPECT_CANDIDATES);
      const hosts = [...new Set(candidates.flatMap((change) => change.hosts))];
      const components = [...new Set(candidates.flatMap((change) => change.components))];
      const places = await repository.placesOf(errorId, hosts, components);
      const items = candidates.filter((change) => inScope(change, places));
      return { items: items.slice(offset, offset + limit), total: items.length };
    },
  };
}

export type ChangesService = ReturnType<typeof changesService>;
