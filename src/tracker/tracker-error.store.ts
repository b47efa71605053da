import { CompiledQuery, type Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { InfrastructureErrorsTable } from '../db/schema.js';
import type { BreakdownDimension, InfrastructureError, StoredOccurrence } from './infrastructure-error.js';
import { toRecord, trackerTransactions } from './tracker-sql.js';

/** One error's reads (its record, occurrences, hourly counts, breakdown), and marking it reported. */
export function trackerErrorStore(database: Database) {
  const { db } = database;
  const trackerTransaction = trackerTransactions(database);
  // The one statement a record's page runs, compiled once (building and compiling it cost more than running it).
  const findByIdSql = db.selectFrom('infrastructure_errors').selectAll().where('id', '=', 0).compile().sql;

  return {
    async findById(id: number): Promise<InfrastructureError | undefined> {
      const { rows } = await db.executeQuery<Selectable<InfrastructureErrorsTable>>(CompiledQuery.raw(findByIdSql, [id]));
      return rows[0] && toRecord(rows[0]);
    },

    /** Marks an error reported (its other fields as they were), with a `report` activity row; undefined when there is none. */
    async markReported(id: number, actorId: number | null, now: Date): Promise<InfrastructureError | undefined> {
      return trackerTransaction(async (trx) => {
        const row = await trx.updateTable('infrastructure_errors').set({ reported: 1 }).where('id', '=', id).where('reported', '=', 0).returningAll().executeTakeFirst();
        if (!row) {
          const already = await trx.selectFrom('infrastructure_errors').selectAll().where('id', '=', id).executeTakeFirst();
          return already && toRecord(already);
        }
        // The error's activity (tracker/triage.store.ts) records who reported it.
        await trx.insertInto('error_activity').values({ error_id: id, at: now.toISOString(), actor_id: actorId, action: 'report', details: '{}' }).execute();
        return toRecord(row);
      });
    },

    /** The kept occurrences of an error, newest first (by when they happened; the latest to arrive first among equals). */
    async occurrences(errorId: number, limit: number, offset: number): Promise<{ items: StoredOccurrence[]; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_occurrences')
          .select(['id', 'occurred_at', 'host', 'component', 'request_id', 'message', 'context'])
          .where('error_id', '=', errorId)
          .orderBy('occurred_at', 'desc').orderBy('id', 'desc')
          .limit(limit).offset(offset)
          .execute(),
        db.selectFrom('error_occurrences').select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('error_id', '=', errorId).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((row) => ({ ...row, id: Number(row.id), occurred_at: new Date(row.occurred_at) })),
        total: Number(count.total),
      };
    },

    /** One kept occurrence of an error, by its id (the console's downloads of any one it shows). */
    async occurrence(errorId: number, occurrenceId: number): Promise<StoredOccurrence | undefined> {
      const row = await db.selectFrom('error_occurrences')
        .select(['id', 'occurred_at', 'host', 'component', 'request_id', 'message', 'context'])
        .where('error_id', '=', errorId).where('id', '=', occurrenceId)
        .executeTakeFirst();
      return row && { ...row, id: Number(row.id), occurred_at: new Date(row.occurred_at) };
    },

    /** Occurrences per hour from `fromHour` to `toHour` (inclusive); hours with none are absent. */
    async hourlyCounts(errorId: number, fromHour: number, toHour: number): Promise<Map<number, number>> {
      const rows = await db.selectFrom('error_histogram').select(['hour', 'count'])
        .where('error_id', '=', errorId).where('hour', '>=', fromHour).where('hour', '<=', toHour)
        .execute();
      return new Map(rows.map((row) => [Number(row.hour), Number(row.count)]));
    },

    /** hourlyCounts of several errors in one statement (a page of the console's list), by error id. */
    async hourlyCountsOf(errorIds: readonly number[], fromHour: number, toHour: number): Promise<Map<number, Map<number, number>>> {
      const byError = new Map<number, Map<number, number>>(errorIds.map((id) => [id, new Map()]));
      if (errorIds.length === 0) return byError;
      const rows = await db.selectFrom('error_histogram').select(['error_id', 'hour', 'count'])
        .where('error_id', 'in', [...errorIds]).where('hour', '>=', fromHour).where('hour', '<=', toHour)
        .execute();
      for (const row of rows) byError.get(Number(row.error_id))?.set(Number(row.hour), Number(row.count));
      return byError;
    },

    /** Occurrences per host or component, largest first ('' is "not given"). */
    async breakdown(errorId: number, dimension: BreakdownDimension, limit: number, offset: number): Promise<{ items: Array<{ value: string; count: number }>; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_breakdown').select(['value', 'count'])
          .where('error_id', '=', errorId).where('dimension', '=', dimension)
          .orderBy('count', 'desc').orderBy('value', 'asc')
          .limit(limit).offset(offset)
          .execute(),
        db.selectFrom('error_breakdown').select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('error_id', '=', errorId).where('dimension', '=', dimension).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map((row) => ({ value: row.value, count: Number(row.count) })), total: Number(count.total) };
    },

    /** The releases or environments an error occurred in, the latest seen first, with their first and last occurrence. */
    async facetValues(errorId: number, dimension: 'release' | 'environment', limit: number, offset: number): Promise<{ items: Array<{ name: string; first_seen: Date | null; last_seen: Date; count: number }>; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('error_breakdown').select(['value', 'count', 'first_seen_at', 'last_seen_at'])
          .where('error_id', '=', errorId).where('dimension', '=', dimension)
          .orderBy('last_seen_at', 'desc').orderBy('value', 'asc')
          .limit(limit).offset(offset)
          .execute(),
        db.selectFrom('error_breakdown').select((eb) => eb.fn.countAll<number | string>().as('total'))
          .where('error_id', '=', errorId).where('dimension', '=', dimension).executeTakeFirstOrThrow(),
      ]);
      return {
        items: rows.map((row) => ({ name: row.value, first_seen: row.first_seen_at === null ? null : new Date(row.first_seen_at), last_seen: new Date(row.last_seen_at), count: Number(row.count) })),
        total: Number(count.total),
      };
    },
  };
}
