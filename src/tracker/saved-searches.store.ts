import type { Selectable } from 'kysely';
import type { Database } from '../db/database.js';
import type { SavedSearchesTable } from '../db/schema.js';
import type { SavedSearch, SavedSearchFields } from './saved-search.js';

/** A second saved search of one user by one name (the unique constraint of migration 049). */
export class DuplicateSavedSearchName extends Error {}

const toSavedSearch = (row: Selectable<SavedSearchesTable>): SavedSearch => ({
  id: Number(row.id), name: row.name, query: row.query, shared: Number(row.shared) === 1, user_id: Number(row.user_id),
  created_at: new Date(row.created_at), updated_at: new Date(row.updated_at),
});

/** The `saved_searches` table (migration 049); who sees which: tracker/saved-searches.service.ts. */
export function savedSearchesRepository(database: Database) {
  const { db, dialect } = database;
  const asDuplicate = (error: unknown) => (dialect.constraints.uniqueViolationColumn(error) ? new DuplicateSavedSearchName() : error);
  /** The user's own searches and everyone's shared ones. */
  const visible = (userId: number) => db.selectFrom('saved_searches').where((eb) => eb.or([eb('user_id', '=', userId), eb('shared', '=', 1)]));

  return {
    /** What `userId` sees, by name (then id). */
    async list(userId: number, limit: number, offset: number): Promise<{ items: SavedSearch[]; total: number }> {
      const [rows, count] = await Promise.all([
        visible(userId).selectAll().orderBy('name').orderBy('id').limit(limit).offset(offset).execute(),
        visible(userId).select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toSavedSearch), total: Number(count.total) };
    },

    /** One that `userId` sees. */
    async find(userId: number, id: number): Promise<SavedSearch | undefined> {
      const row = await visible(userId).selectAll().where('id', '=', id).executeTakeFirst();
      return row && toSavedSearch(row);
    },

    /** Those `userId` sees by this name, its own first. */
    async findByName(userId: number, name: string): Promise<SavedSearch[]> {
      const rows = await visible(userId).selectAll().where('name', '=', name).orderBy('id').execute();
      return rows.map(toSavedSearch).sort((a, b) => Number(b.user_id === userId) - Number(a.user_id === userId));
    },

    async create(userId: number, fields: Required<Pick<SavedSearchFields, 'name' | 'query'>> & SavedSearchFields, at: Date): Promise<SavedSearch> {
      const now = at.toISOString();
      try {
        const row = await db.insertInto('saved_searches')
          .values({ user_id: userId, name: fields.name, query: fields.query, shared: fields.shared ? 1 : 0, created_at: now, updated_at: now })
          .returningAll().executeTakeFirstOrThrow();
        return toSavedSearch(row);
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /** Changes one of `userId`'s own; undefined when it has none of this id. */
    async update(userId: number, id: number, fields: SavedSearchFields, at: Date): Promise<SavedSearch | undefined> {
      try {
        const row = await db.updateTable('saved_searches')
          .set({ ...fields, shared: fields.shared === undefined ? undefined : fields.shared ? 1 : 0, updated_at: at.toISOString() })
          .where('id', '=', id).where('user_id', '=', userId)
          .returningAll().executeTakeFirst();
        return row && toSavedSearch(row);
      } catch (error) {
        throw asDuplicate(error);
      }
    },

    /** Deletes one of `userId`'s own; whether there was one. */
    async delete(userId: number, id: number): Promise<boolean> {
      const result = await db.deleteFrom('saved_searches').where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type SavedSearchesRepository = ReturnType<typeof savedSearchesRepository>;
