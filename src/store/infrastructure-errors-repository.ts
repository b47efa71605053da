import type { Selectable } from 'kysely';
import type { InfrastructureError } from '../domain/records.js';
import type { Database } from './database.js';
import type { InfrastructureErrorsTable } from './schema.js';

export interface ErrorOccurrence {
  fingerprint: string;
  error_class: string;
  message: string;
  backtrace: string;
}

function toRecord(row: Selectable<InfrastructureErrorsTable>): InfrastructureError {
  return {
    id: Number(row.id),
    backtrace: row.backtrace,
    counter: Number(row.counter),
    created_at: new Date(row.created_at),
    error_class: row.error_class,
    fingerprint: row.fingerprint,
    message: row.message,
    reported: Number(row.reported) === 1,
    updated_at: new Date(row.updated_at),
  };
}

export function infrastructureErrorsRepository(database: Database) {
  const { db } = database;
  return {
    /**
     * Counts one occurrence in a single atomic statement: a new fingerprint inserts a record with
     * counter 1; a known one increments its counter and takes the latest message and time. Concurrent
     * reports of the same error are all counted, in any process.
     */
    async recordOccurrence(occurrence: ErrorOccurrence, now: Date): Promise<{ record: InfrastructureError; created: boolean }> {
      const at = now.toISOString();
      const row = await db
        .insertInto('infrastructure_errors')
        .values({ ...occurrence, counter: 1, reported: 0, created_at: at, updated_at: at })
        .onConflict((oc) =>
          oc.column('fingerprint').doUpdateSet((eb) => ({
            counter: eb('infrastructure_errors.counter', '+', 1),
            message: eb.ref('excluded.message'),
            backtrace: eb.ref('excluded.backtrace'),
            updated_at: at,
          })),
        )
        .returningAll()
        .executeTakeFirstOrThrow();
      const record = toRecord(row);
      return { record, created: record.counter === 1 };
    },

    async findById(id: number): Promise<InfrastructureError | undefined> {
      const row = await db.selectFrom('infrastructure_errors').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
  };
}

export type InfrastructureErrorsRepository = ReturnType<typeof infrastructureErrorsRepository>;
