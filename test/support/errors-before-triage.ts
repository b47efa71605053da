import type { Kysely } from 'kysely';
import type { Schema } from '../../src/db/schema.js';
import type { ErrorReport } from '../../src/tracker/infrastructure-error.js';

/**
 * Writes reports as the tracker did before triage (migration 023) on a database migrated only so far:
 * one record per fingerprint and its host and component breakdown rows ('' for none), the columns
 * those migrations had. Today's repository writes triage too, which such a database has not.
 */
export async function writeErrorsBeforeTriage(db: Kysely<Schema>, reports: readonly ErrorReport[]): Promise<void> {
  const byFingerprint = new Map<string, ErrorReport[]>();
  for (const report of reports) byFingerprint.set(report.fingerprint, [...(byFingerprint.get(report.fingerprint) ?? []), report]);
  for (const [fingerprint, group] of byFingerprint) {
    const at = group[0]!.occurred_at.toISOString();
    const last = group.at(-1)!;
    const row = await (db as unknown as Kysely<Record<string, Record<string, unknown>>>).insertInto('infrastructure_errors').values({
      fingerprint, error_class: last.error_class, message: last.message, backtrace: last.backtrace,
      counter: group.reduce((sum, report) => sum + report.count, 0), reported: 0, created_at: at, updated_at: at,
    }).returning('id').executeTakeFirstOrThrow();
    const breakdown = new Map<string, { dimension: 'host' | 'component'; value: string; count: number }>();
    for (const report of group) {
      for (const dimension of ['host', 'component'] as const) {
        const value = report[dimension] ?? '';
        const key = `${dimension}|${value}`;
        const seen = breakdown.get(key);
        if (seen) seen.count += report.count;
        else breakdown.set(key, { dimension, value, count: report.count });
      }
    }
    await db.insertInto('error_breakdown').values([...breakdown.values()].map((one) => ({ error_id: Number(row['id']), ...one, last_seen_at: at }))).execute();
  }
}
