import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { ChangesTable } from '../db/schema.js';
import type { Change, ChangeFields, ErrorPlaces } from './change.js';

/** The values one statement asks about (PostgreSQL takes at most 65,535 parameters). */
const CHUNK = 1_000;

function toChange(row: Selectable<ChangesTable>): Change {
  return {
    id: Number(row.id), kind: row.kind, title: row.title, release: row.release,
    started_at: new Date(row.started_at), ended_at: row.ended_at === null ? null : new Date(row.ended_at),
    hosts: JSON.parse(row.hosts) as string[], components: JSON.parse(row.components) as string[],
    created_by: row.created_by === null ? null : Number(row.created_by),
  };
}

const toColumns = (fields: ChangeFields) => ({
  kind: fields.kind, title: fields.title, release: fields.release,
  started_at: fields.started_at.toISOString(), ended_at: fields.ended_at === null ? null : fields.ended_at.toISOString(),
  hosts: JSON.stringify(fields.hosts), components: JSON.stringify(fields.components),
});

/** The only SQL of changes (migration 048); and where an error occurred, read from the tracker's breakdown. */
export function changesRepository(database: Database) {
  const { db } = database;
  return {
    async page(limit: number, offset: number): Promise<{ items: Change[]; total: number }> {
      const { n } = await db.selectFrom('changes').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      const rows = await db.selectFrom('changes').selectAll().orderBy('id').limit(limit).offset(offset).execute();
      return { items: rows.map(toChange), total: Number(n) };
    },

    async find(id: number): Promise<Change | undefined> {
      const row = await db.selectFrom('changes').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toChange(row);
    },

    async create(fields: ChangeFields, createdBy: number | null, now: Date): Promise<Change> {
      const at = now.toISOString();
      const row = await db.insertInto('changes').values({ ...toColumns(fields), created_by: createdBy, created_at: at, updated_at: at }).returningAll().executeTakeFirstOrThrow();
      return toChange(row);
    },

    async update(id: number, fields: ChangeFields, now: Date): Promise<Change | undefined> {
      const row = await db.updateTable('changes').set({ ...toColumns(fields), updated_at: now.toISOString() }).where('id', '=', id).returningAll().executeTakeFirst();
      return row && toChange(row);
    },

    async remove(id: number): Promise<boolean> {
      const result = await db.deleteFrom('changes').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    /**
     * The changes that started by `at` and had not ended before `since` (or still run), by id, at most
     * `limit` of them (the latest started).
     */
    async runningBetween(since: Date, at: Date, limit: number): Promise<Change[]> {
      const rows = await db.selectFrom('changes').selectAll()
        .where('started_at', '<=', at.toISOString())
        .where((eb) => eb.or([eb('ended_at', 'is', null), eb('ended_at', '>=', since.toISOString())]))
        .orderBy('started_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toChange).sort((a, b) => a.id - b.id);
    },

    /** Which of `hosts` and `components` error `errorId` occurred on (its breakdown's host and component rows). */
    async placesOf(errorId: number, hosts: readonly string[], components: readonly string[]): Promise<ErrorPlaces> {
      const seen = async (dimension: 'host' | 'component', values: readonly string[]) => {
        const found = new Set<string>();
        for (let i = 0; i < values.length; i += CHUNK) {
          const rows = await db.selectFrom('error_breakdown').select('value')
            .where('error_id', '=', errorId).where('dimension', '=', dimension).where('value', 'in', values.slice(i, i + CHUNK)).execute();
          for (const row of rows) found.add(row.value);
        }
        return found;
      };
      return { hosts: await seen('host', hosts), components: await seen('component', components) };
    },
  };
}

export type ChangesRepository = ReturnType<typeof changesRepository>;
