import { type Expression, type ExpressionBuilder, sql, type SqlBool, type Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { ErrorActivityTable, ErrorNotesTable, ErrorTriageTable, Schema } from '../db/schema.js';
import type { ErrorFilters } from './infrastructure-error.js';
import { filtered, idIn, trackerTransactions } from './tracker-sql.js';
import type { ActivityEntry, ErrorNote, Triage, TriageChange, TriageStatus } from './triage.js';
import { isLaterRelease } from './release-order.js';

type Row = Selectable<ErrorTriageTable>;

const date = (value: string | null) => (value === null ? null : new Date(value));

function toTriage(row: Row): Triage {
  return {
    status: row.triage_status,
    assignee_id: row.assignee_id === null ? null : Number(row.assignee_id),
    snoozed_until: date(row.snoozed_until),
    snooze_occurrences: row.snooze_occurrences === null ? null : Number(row.snooze_occurrences),
    resolved_at: date(row.resolved_at),
    resolved_by_id: row.resolved_by_id === null ? null : Number(row.resolved_by_id),
    regressed_at: date(row.regressed_at),
    resolved_in_release: row.resolved_in_release,
    updated_at: new Date(row.updated_at),
  };
}

const toNote = (row: Selectable<ErrorNotesTable>): ErrorNote => ({
  id: Number(row.id), error_id: Number(row.error_id), author_id: row.author_id === null ? null : Number(row.author_id), body: row.body, created_at: new Date(row.created_at),
});

const toActivity = (row: Selectable<ErrorActivityTable>): ActivityEntry => ({
  id: Number(row.id), at: new Date(row.at), actor_id: row.actor_id === null ? null : Number(row.actor_id), action: row.action as ActivityEntry['action'], details: row.details,
});


/** Which errors a bulk change selects: ids (any number, as one parameter) or the list's filters. */
export type Selection = { ids: readonly number[] } | { filters: ErrorFilters };

/** The counter at which a snooze of `n` more occurrences ends: the error's counter now plus n. */
const untilCounter = (n: number) => sql`(select counter from infrastructure_errors where infrastructure_errors.id = error_triage.error_id) + ${n}`;

/** The snooze's columns for a change to `status`: its time and count when snoozed, none otherwise. */
const snoozeColumns = (status: TriageStatus, change: TriageChange) => (status === 'snoozed'
  ? {
    snoozed_until: change.snoozed_until?.toISOString() ?? null,
    snooze_occurrences: change.snooze_occurrences ?? null,
    snooze_until_counter: change.snooze_occurrences === undefined ? null : untilCounter(change.snooze_occurrences),
  }
  : { snoozed_until: null, snooze_occurrences: null, snooze_until_counter: null });

/** An activity row's details: a JSON object as text. */
const details = (value: Record<string, unknown>) => JSON.stringify(value);

/** SQL text of a JSON string literal for a status word (from code, never from a request). */
const jsonWord = (word: TriageStatus) => `"${word}"`;

/**
 * Triage's SQL (docs/api.md#error-triage): `error_triage`, one row per error (migration
 * 023), notes and activity. Every write is a tracker transaction: its end moves the tracker's data
 * version, so cached pages of the list go at once (docs/architecture.md#how-cached-pages-stay-right).
 */
/** Errors one statement of a bulk change changes at most (PostgreSQL): 100,000 in one passed the statement timeout on a busy machine. */
const CHANGE_CHUNK = 10_000;

export function triageRepository(database: Database) {
  const { db, dialect } = database;
  const trackerTransaction = trackerTransactions(database);

  /** The earliest time a snooze ends, as known at a tracker data version. */
  let known: { version: string; next: string | null } | undefined;

  /** Wakes every error whose snooze time has passed by `now`: `unresolved`, with a `status` activity row dated when it woke. */
  const wakeSnoozed = (now: Date) => trackerTransaction(async (trx) => {
    const at = now.toISOString();
    const due = (eb: ExpressionBuilder<Schema, 'error_triage'>) => eb.and([eb('triage_status', '=', 'snoozed'), eb('snoozed_until', '<=', at)]);
    await trx.insertInto('error_activity').columns(['error_id', 'at', 'actor_id', 'action', 'details'])
      .expression((eb) => eb.selectFrom('error_triage')
        .select(['error_triage.error_id', sql<string>`snoozed_until`.as('at'), sql<null>`cast(null as integer)`.as('actor_id'), sql<string>`'status'`.as('action'), sql.lit(details({ from: 'snoozed', to: 'unresolved', reason: 'time' })).as('details')])
        .where(due).orderBy('error_id'))
      .execute();
    const result = await trx.updateTable('error_triage')
      .set(() => ({ triage_status: 'unresolved', updated_at: sql<string>`snoozed_until`, snoozed_until: null, snooze_occurrences: null, snooze_until_counter: null }))
      .where(due)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  });

  return {
    /**
     * Wakes the snoozed errors whose time has passed (docs/api.md#snoozing), before anything that
     * shows a triage status is read. Undefined (no promise, no query) while nothing is due: the
     * earliest snooze's end is read once per tracker data version.
     */
    wakeIfDue(now: Date): Promise<number> | undefined {
      const version = database.dataVersions.tracker();
      const current = version !== undefined && known?.version === version ? known : undefined;
      // Nothing snoozed at this version (the common case, on every read of the tracker): no date to format.
      if (current?.next === null) return undefined;
      const at = now.toISOString();
      if (current !== undefined && current.next > at) return undefined;
      return (async () => {
        const row = await db.selectFrom('error_triage').select((eb) => eb.fn.min('snoozed_until').as('next'))
          .where('triage_status', '=', 'snoozed').executeTakeFirst();
        const next = (row?.next) ?? null;
        if (next !== null && next <= at) return wakeSnoozed(now);
        if (version !== undefined) known = { version, next };
        return 0;
      })();
    },

    /** The latest release the error's occurrences carried, in the order of tracker/release-order.ts; undefined when none carried one. */
    async latestRelease(errorId: number): Promise<string | undefined> {
      const rows = await db.selectFrom('error_breakdown as b').leftJoin('releases as r', 'r.name', 'b.value')
        .select(['b.value as name', 'r.first_seen_at']).where('b.error_id', '=', errorId).where('b.dimension', '=', 'release').execute();
      const firstSeen = new Map(rows.flatMap((row) => (row.first_seen_at === null ? [] : [[row.name, row.first_seen_at] as const])));
      return rows.map((row) => row.name).reduce<string | undefined>((latest, name) => (latest === undefined || isLaterRelease(name, latest, (n) => firstSeen.get(n)) ? name : latest), undefined);
    },

    /** An error's triage; undefined when there is no such error. */
    async find(errorId: number): Promise<Triage | undefined> {
      const row = await db.selectFrom('error_triage').selectAll().where('error_id', '=', errorId).executeTakeFirst();
      return row && toTriage(row);
    },

    /** The triage of each of `ids` that exists (a page of a list), in one statement. */
    async findMany(ids: readonly number[]): Promise<Map<number, Triage>> {
      if (ids.length === 0) return new Map();
      const rows = await db.selectFrom('error_triage').selectAll().where(dialect.choose(idIn)('error_id', ids)).execute();
      return new Map(rows.map((row) => [Number(row.error_id), toTriage(row)]));
    },

    /**
     * Applies `change` to one error as `actorId` (null: the operator) at `now`, with an activity row
     * per thing changed; a change to what it already is writes nothing. Optimistic: the update
     * holds only while the state it was worked out from does, and is worked out again otherwise.
     */
    async change(errorId: number, change: TriageChange, actorId: number | null, now: Date): Promise<Triage | undefined> {
      const at = now.toISOString();
      // A try fails only when another change to this error committed meanwhile: some change always wins.
      for (;;) {
        const outcome = await trackerTransaction(async (trx) => {
          const row = await trx.selectFrom('error_triage').selectAll().where('error_id', '=', errorId).executeTakeFirst();
          if (!row) return { triage: undefined };
          const current = toTriage(row);
          const status = change.status ?? current.status;
          const resnooze = change.status === 'snoozed';
          const statusChanged = status !== current.status || resnooze;
          const assignee = change.assignee_id === undefined ? current.assignee_id : change.assignee_id;
          const assigneeChanged = assignee !== current.assignee_id;
          // Resolved again in another release (or in none: resolved for good).
          const releaseChanged = status === 'resolved' && change.status === 'resolved' && (change.in_release ?? null) !== current.resolved_in_release;
          if (!statusChanged && !assigneeChanged && !releaseChanged) return { triage: current };
          const set: Record<string, unknown> = { updated_at: at, assignee_id: assignee };
          if (statusChanged) {
            set['triage_status'] = status;
            if (status === 'resolved') Object.assign(set, { resolved_at: at, resolved_by_id: actorId });
            else Object.assign(set, { resolved_at: null, resolved_by_id: null });
            Object.assign(set, snoozeColumns(status, change));
          }
          if (statusChanged || releaseChanged) set['resolved_in_release'] = status === 'resolved' ? change.in_release ?? null : null;
          const updated = await trx.updateTable('error_triage').set(set)
            .where('error_id', '=', errorId).where('triage_status', '=', current.status)
            .where((eb) => (current.assignee_id === null ? eb('assignee_id', 'is', null) : eb('assignee_id', '=', current.assignee_id)))
            .where((eb) => (row.snoozed_until === null ? eb('snoozed_until', 'is', null) : eb('snoozed_until', '=', row.snoozed_until)))
            .returningAll()
            .executeTakeFirst();
          if (!updated) return { retry: true as const };
          const activity = [];
          if (statusChanged || releaseChanged) {
            activity.push({
              error_id: errorId, at, actor_id: actorId, action: 'status',
              details: details({
                from: current.status, to: status,
                ...(status === 'resolved' && change.in_release !== undefined ? { in_release: change.in_release } : {}),
                ...(status === 'snoozed' ? { snoozed_until: change.snoozed_until?.toISOString().replace(/\.\d{3}Z$/, '+00:00') ?? null, snooze_occurrences: change.snooze_occurrences ?? null } : {}),
              }),
            });
          }
          if (assigneeChanged) activity.push({ error_id: errorId, at, actor_id: actorId, action: 'assign', details: details({ from: current.assignee_id, to: assignee }) });
          await trx.insertInto('error_activity').values(activity).execute();
          return { triage: toTriage(updated) };
        });
        if (!('retry' in outcome)) return outcome.triage;
      }
    },

    /**
     * Applies `change` to every error `selection` names that it changes, in one update (and one
     * insert of their activity rows); answers how many it changed. Every error it changes gets its
     * activity row, and the count is exactly those: on PostgreSQL the update and the activity are one
     * statement a chunk (a data-modifying `with`), whose activity is of the rows the update returned; under
     * READ COMMITTED two statements each read anew, and an error that regressed between a filter's
     * activity insert and its update was changed without its activity row (docs/api.md#error-triage).
     */
    async changeMany(selection: Selection, change: TriageChange, actorId: number | null, now: Date): Promise<number> {
      const at = now.toISOString();
      // The triage's own filters on its own columns; the others through the errors they select.
      const ownFilters = (eb: ExpressionBuilder<Schema, 'error_triage'>) => {
        const conditions: Array<Expression<SqlBool>> = [];
        if ('ids' in selection) return eb.and(conditions);
        const { status: byStatus, assignee: byAssignee } = selection.filters;
        if (byStatus !== undefined) conditions.push(eb('triage_status', '=', byStatus));
        if (byAssignee === 'none') conditions.push(eb('assignee_id', 'is', null));
        else if (byAssignee !== undefined) conditions.push(eb('assignee_id', '=', byAssignee));
        return eb.and(conditions);
      };
      const selected = (eb: ExpressionBuilder<Schema, 'error_triage'>) => {
        if ('ids' in selection) return dialect.choose(idIn)('error_id', selection.ids);
        const rest: ErrorFilters = { ...selection.filters };
        delete rest.status;
        delete rest.assignee;
        const conditions: Array<Expression<SqlBool>> = [ownFilters(eb)];
        if (Object.keys(rest).length > 0) {
          conditions.push(eb('error_id', 'in', eb.selectFrom('infrastructure_errors').select('infrastructure_errors.id').where((errors) => filtered(errors, rest, dialect))));
        }
        return eb.and(conditions);
      };
      const status = change.status;
      const assignee = change.assignee_id;
      const statusDiffers = (eb: ExpressionBuilder<Schema, 'error_triage'>) =>
        (status === 'snoozed' ? sql<SqlBool>`1 = 1` : eb('triage_status', '<>', status as TriageStatus));
      // 0 is no user: ids start at 1.
      const assigneeDiffers = () => sql<SqlBool>`coalesce(assignee_id, 0) <> ${assignee ?? 0}`;
      const changes = (eb: ExpressionBuilder<Schema, 'error_triage'>) => eb.or([
        ...(status === undefined ? [] : [statusDiffers(eb)]),
        ...(assignee === undefined ? [] : [assigneeDiffers()]),
      ]);
      const set: Record<string, unknown> = { updated_at: at };
      if (assignee !== undefined) set['assignee_id'] = assignee;
      if (status !== undefined) {
        set['triage_status'] = status;
        if (status === 'resolved') {
          // Already resolved ones (their assignee changing) keep who resolved them and when.
          set['resolved_at'] = sql`case when triage_status = 'resolved' then resolved_at else ${at} end`;
          set['resolved_by_id'] = sql`case when triage_status = 'resolved' then resolved_by_id else ${actorId} end`;
          set['resolved_in_release'] = sql`case when triage_status = 'resolved' then resolved_in_release else ${change.in_release ?? null} end`;
        } else Object.assign(set, { resolved_at: null, resolved_by_id: null, resolved_in_release: null });
        Object.assign(set, snoozeColumns(status, change));
      }
      const snooze = status === 'snoozed' ? `,"snoozed_until":${change.snoozed_until ? `"${change.snoozed_until.toISOString().replace(/\.\d{3}Z$/, '+00:00')}"` : 'null'},"snooze_occurrences":${change.snooze_occurrences ?? 'null'}` : '';
      /** An activity row's columns but its error_id, from the triage row `row` names as it was before the change. */
      const statusDetails = (row: string) => sql<string>`${'{"from":"'} || ${sql.ref(`${row}.triage_status`)} || ${`","to":${jsonWord(status as TriageStatus)}${snooze}}`}`;
      const assignDetails = (row: string) => sql<string>`${'{"from":'} || coalesce(cast(${sql.ref(`${row}.assignee_id`)} as varchar(20)), 'null') || ${`,"to":${assignee ?? 'null'}}`}`;

      // PostgreSQL: the errors chosen first, then changed a chunk at a time, each chunk one statement,
      // so one snapshot: the chunk's errors as they were (`before`, still as chosen), the update of
      // exactly those (a row another transaction changed meanwhile is checked again on its last
      // version: the triage's own filters and what it changes), and the activity of exactly the rows
      // it updated. Chunks keep each statement far inside the statement timeout at 100,000 errors.
      const inChunks = () => trackerTransaction(async (trx) => {
        const chosen = (await trx.selectFrom('error_triage').select('error_id').where((eb) => eb.and([selected(eb), changes(eb)])).orderBy('error_id').execute()).map((row) => Number(row.error_id));
        const rows = [
          ...(status === undefined ? [] : [sql`select before.error_id, ${sql.lit(at)}, cast(${actorId} as integer), 'status', ${statusDetails('before')}
            from before join changed on changed.error_id = before.error_id
            where ${status === 'snoozed' ? sql`1 = 1` : sql`before.triage_status <> ${sql.lit(status)}`}`]),
          ...(assignee === undefined ? [] : [sql`select before.error_id, ${sql.lit(at)}, cast(${actorId} as integer), 'assign', ${assignDetails('before')}
            from before join changed on changed.error_id = before.error_id
            where coalesce(before.assignee_id, 0) <> ${assignee ?? 0}`]),
        ];
        let count = 0;
        for (let start = 0; start < chosen.length; start += CHANGE_CHUNK) {
          const chunk = chosen.slice(start, start + CHANGE_CHUNK);
          const stillChosen = (eb: ExpressionBuilder<Schema, 'error_triage'>) => eb.and([idIn.postgres('error_id', chunk), ownFilters(eb), changes(eb)]);
          const result = await trx
            .with('before', (qb) => qb.selectFrom('error_triage').select(['error_id', 'triage_status', 'assignee_id']).where(stillChosen))
            .with('changed', (qb) => qb.updateTable('error_triage').set(set)
              .where((eb) => eb.and([eb('error_id', 'in', eb.selectFrom('before').select('before.error_id')), stillChosen(eb)]))
              .returning('error_triage.error_id'))
            .with('logged', (qb) => qb.insertInto('error_activity').columns(['error_id', 'at', 'actor_id', 'action', 'details'])
              // Each error's status row before its assign row, as a change of one error writes them.
              .expression(sql`${sql.join(rows, sql` union all `)} order by 1, 4 desc`))
            .selectFrom('changed').select((eb) => eb.fn.countAll<number | string>().as('changed'))
            .executeTakeFirstOrThrow();
          count += Number(result.changed);
        }
        return count;
      });

      // SQLite: the transaction holds the write lock from its start (begin immediate), so nothing
      // changes between its statements; they name the ids chosen first all the same.
      const idsFirst = () => trackerTransaction(async (trx) => {
        const chosen = await trx.selectFrom('error_triage').select('error_id').where((eb) => eb.and([selected(eb), changes(eb)])).orderBy('error_id').execute();
        if (chosen.length === 0) return 0;
        const these = () => dialect.choose(idIn)('error_id', chosen.map((row) => Number(row.error_id)));
        if (status !== undefined) {
          await trx.insertInto('error_activity').columns(['error_id', 'at', 'actor_id', 'action', 'details'])
            .expression((eb) => eb.selectFrom('error_triage')
              .select(['error_id', sql.lit(at).as('at'), sql<number | null>`cast(${actorId} as integer)`.as('actor_id'), sql.lit('status').as('action'), statusDetails('error_triage').as('details')])
              .where((w) => w.and([these(), statusDiffers(w)])).orderBy('error_id'))
            .execute();
        }
        if (assignee !== undefined) {
          await trx.insertInto('error_activity').columns(['error_id', 'at', 'actor_id', 'action', 'details'])
            .expression((eb) => eb.selectFrom('error_triage')
              .select(['error_id', sql.lit(at).as('at'), sql<number | null>`cast(${actorId} as integer)`.as('actor_id'), sql.lit('assign').as('action'), assignDetails('error_triage').as('details')])
              .where((w) => w.and([these(), assigneeDiffers()])).orderBy('error_id'))
            .execute();
        }
        const result = await trx.updateTable('error_triage').set(set)
          .where((eb) => eb.and([these(), changes(eb)]))
          .executeTakeFirst();
        return Number(result.numUpdatedRows);
      });
      return dialect.choose({ sqlite: idsFirst, postgres: inChunks })();
    },

    /** The snoozes whose time has passed, woken (the retention job). */
    wakeSnoozed,

    async notes(errorId: number, limit: number, offset: number): Promise<{ items: ErrorNote[]; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_notes').selectAll().where('error_id', '=', errorId).orderBy('id').limit(limit).offset(offset).execute(),
        db.selectFrom('error_notes').select((eb) => eb.fn.countAll<number | string>().as('total')).where('error_id', '=', errorId).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toNote), total: Number(count.total) };
    },

    async findNote(errorId: number, noteId: number): Promise<ErrorNote | undefined> {
      const row = await db.selectFrom('error_notes').selectAll().where('id', '=', noteId).where('error_id', '=', errorId).executeTakeFirst();
      return row && toNote(row);
    },

    /** Adds a note with its activity row; undefined when there is no such error. */
    async addNote(errorId: number, authorId: number | null, body: string, now: Date): Promise<ErrorNote | undefined> {
      const at = now.toISOString();
      return trackerTransaction(async (trx) => {
        const error = await trx.selectFrom('infrastructure_errors').select('id').where('id', '=', errorId).executeTakeFirst();
        if (!error) return undefined;
        const row = await trx.insertInto('error_notes').values({ error_id: errorId, author_id: authorId, body, created_at: at }).returningAll().executeTakeFirstOrThrow();
        await trx.insertInto('error_activity').values({ error_id: errorId, at, actor_id: authorId, action: 'note', details: details({ note_id: Number(row.id) }) }).execute();
        return toNote(row);
      });
    },

    /** Deletes a note, with an activity row; false when there was none. */
    async deleteNote(errorId: number, noteId: number, actorId: number | null, now: Date): Promise<boolean> {
      return trackerTransaction(async (trx) => {
        const result = await trx.deleteFrom('error_notes').where('id', '=', noteId).where('error_id', '=', errorId).executeTakeFirst();
        if (Number(result.numDeletedRows) === 0) return false;
        await trx.insertInto('error_activity').values({ error_id: errorId, at: now.toISOString(), actor_id: actorId, action: 'note_deleted', details: details({ note_id: noteId }) }).execute();
        return true;
      });
    },

    /** An error's activity, oldest first. */
    async activity(errorId: number, limit: number, offset: number): Promise<{ items: ActivityEntry[]; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_activity').selectAll().where('error_id', '=', errorId).orderBy('id').limit(limit).offset(offset).execute(),
        db.selectFrom('error_activity').select((eb) => eb.fn.countAll<number | string>().as('total')).where('error_id', '=', errorId).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toActivity), total: Number(count.total) };
    },

    /** Whether the error exists. */
    async exists(errorId: number): Promise<boolean> {
      return (await db.selectFrom('infrastructure_errors').select('id').where('id', '=', errorId).executeTakeFirst()) !== undefined;
    },
  };
}

export type TriageRepository = ReturnType<typeof triageRepository>;
