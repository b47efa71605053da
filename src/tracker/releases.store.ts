import { sql } from 'kysely';
import type { Database } from '../db/database.js';

/** A release as the releases resource shows it (docs/api.md#releases). */
export interface Release {
  name: string;
  /** The first occurrence that carried it, across the errors; null while it is only declared. */
  first_seen: Date | null;
  errors_new: number;
  regressions: number;
}

/**
 * The `releases` table (migration 047): the batches that count occurrences keep its counts
 * (tracker/tracker-batch.store.ts); here it is read, and a release declared ahead of its first event.
 */
export function releasesRepository(database: Database) {
  const { db } = database;
  const toRelease = (row: { name: string; first_seen_at: string | null; errors_new: number | string; regressions: number | string }): Release => ({
    name: row.name, first_seen: row.first_seen_at === null ? null : new Date(row.first_seen_at), errors_new: Number(row.errors_new), regressions: Number(row.regressions),
  });
  return {
    /** The newest first: by first occurrence, or by declaration while none came. */
    async list(limit: number, offset: number): Promise<{ items: Release[]; total: number }> {
      const [rows, count] = await Promise.all([
        db.selectFrom('releases').select(['name', 'first_seen_at', 'errors_new', 'regressions'])
          .orderBy(sql`coalesce(first_seen_at, declared_at)`, 'desc').orderBy('name', 'asc')
          .limit(limit).offset(offset).execute(),
        db.selectFrom('releases').select((eb) => eb.fn.countAll<number | string>().as('total')).executeTakeFirstOrThrow(),
      ]);
      return { items: rows.map(toRelease), total: Number(count.total) };
    },

    /** Declares a release; `created` is false when it was seen or declared before (it is then left as it was). */
    async declare(name: string, at: Date): Promise<{ release: Release; created: boolean }> {
      const inserted = await db.insertInto('releases').values({ name, first_seen_at: null, declared_at: at.toISOString() })
        .onConflict((oc) => oc.column('name').doNothing())
        .returning(['name', 'first_seen_at', 'errors_new', 'regressions']).executeTakeFirst();
      if (inserted) return { release: toRelease(inserted), created: true };
      const found = await db.selectFrom('releases').select(['name', 'first_seen_at', 'errors_new', 'regressions']).where('name', '=', name).executeTakeFirstOrThrow();
      return { release: toRelease(found), created: false };
    },
  };
}

export type ReleasesRepository = ReturnType<typeof releasesRepository>;
