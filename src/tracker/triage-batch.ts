import type { Kysely, Selectable } from 'kysely';
import type { ErrorTriageTable, InfrastructureErrorsTable, Schema } from '../db/schema.js';
import type { BatchTriage } from './infrastructure-error.js';
import { isLaterRelease } from './release-order.js';

/** At most this many ids go into one statement. */
const IDS_PER_STATEMENT = 500;


/** An activity row's details: a JSON object as text. */
const details = (value: Record<string, unknown>) => JSON.stringify(value);

/**
 * Whether a release comes after another (tracker/release-order.ts), with the first sightings of the
 * releases involved read once for the batch (before it counts its own).
 */
async function releaseOrder(
  trx: Kysely<Schema>,
  rows: ReadonlyArray<{ error_id: number; resolved_in_release: string | null }>,
  releasesOf: ReadonlyMap<number, ReadonlyArray<string | null>> | undefined,
): Promise<(release: string, resolvedIn: string) => boolean> {
  const names = new Set<string>();
  for (const row of rows) {
    names.add(row.resolved_in_release!);
    for (const release of releasesOf?.get(Number(row.error_id)) ?? []) if (release !== null) names.add(release);
  }
  const named = [...names].sort();
  const firstSeen = new Map<string, string>();
  for (let i = 0; i < named.length; i += IDS_PER_STATEMENT) {
    const found = await trx.selectFrom('releases').select(['name', 'first_seen_at']).where('name', 'in', named.slice(i, i + IDS_PER_STATEMENT)).where('first_seen_at', 'is not', null).execute();
    for (const row of found) firstSeen.set(row.name, row.first_seen_at!);
  }
  return (release, resolvedIn) => isLaterRelease(release, resolvedIn, (name) => firstSeen.get(name));
}

/**
 * Inside the transaction that counts a batch of reports, after its upsert (so on PostgreSQL the
 * batch already holds every error's row, and a concurrent batch of the same error waits for it:
 * docs/api.md#regressions):
 * - a `resolved` error is reopened (`unresolved`, regressed_at now) by a conditional update: only
 *   the transaction that finds it still resolved changes it, so it regresses exactly once however
 *   many occurrences arrive together, in one process or many;
 * - a `snoozed` error whose count is reached or whose time has passed wakes (`unresolved`);
 * - the activity records the regressions and the wakes (the first sighting of new errors is written
 *   with the batch's rows: tracker-batch.store.ts recordBatch).
 * `rows` are the errors as the upsert left them (their triage rows, made by migration 023's trigger
 * for new ones, are read here).
 */
export async function triageInBatch(
  trx: Kysely<Schema>,
  rows: ReadonlyArray<Selectable<InfrastructureErrorsTable>>,
  now: Date,
  /** The triage rows of `rows` not `unresolved`, when the caller read them already (in the statement that wrote the batch's rows). */
  read?: ReadonlyArray<Pick<Selectable<ErrorTriageTable>, 'error_id' | 'triage_status' | 'snoozed_until' | 'snooze_until_counter' | 'resolved_in_release'>>,
  /** The releases the batch's occurrences of each error carried (null: one carried none). */
  releasesOf?: ReadonlyMap<number, ReadonlyArray<string | null>>,
): Promise<Map<number, BatchTriage>> {
  const at = now.toISOString();
  const result = new Map<number, BatchTriage>();
  const counters = new Map<number, number>();
  for (const row of rows) {
    result.set(Number(row.id), { status: 'unresolved', regressed: false });
    counters.set(Number(row.id), Number(row.counter));
  }
  // Only errors triaged away from `unresolved` have anything to do: read by key, few rows.
  const ids = [...counters.keys()];
  const resolved: number[] = [];
  const due = new Map<number, 'occurrences' | 'time'>();
  let triaged = read;
  if (!triaged) {
    const found: Array<NonNullable<typeof read>[number]> = [];
    for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
      found.push(...await trx.selectFrom('error_triage').select(['error_id', 'triage_status', 'snoozed_until', 'snooze_until_counter', 'resolved_in_release'])
        .where('error_id', 'in', ids.slice(i, i + IDS_PER_STATEMENT)).where('triage_status', '<>', 'unresolved')
        .execute());
    }
    triaged = found;
  }
  const inRelease = triaged.filter((row) => row.triage_status === 'resolved' && row.resolved_in_release !== null);
  const laterThanResolved = inRelease.length === 0 ? undefined : await releaseOrder(trx, inRelease, releasesOf);
  for (const row of triaged) {
    const id = Number(row.error_id);
    result.set(id, { status: row.triage_status, regressed: false });
    // Resolved in a release: only an occurrence of a later release (or of none said) reopens it.
    if (row.triage_status === 'resolved' && row.resolved_in_release !== null
      && !(releasesOf?.get(id) ?? [null]).some((release) => release === null || laterThanResolved!(release, row.resolved_in_release!))) continue;
    if (row.triage_status === 'resolved') resolved.push(id);
    else if (row.triage_status === 'snoozed') {
      if (row.snooze_until_counter !== null && (counters.get(id) as number) >= Number(row.snooze_until_counter)) due.set(id, 'occurrences');
      else if (row.snoozed_until !== null && row.snoozed_until <= at) due.set(id, 'time');
    }
  }
  const activity: Array<{ error_id: number; at: string; actor_id: null; action: string; details: string }> = [];
  resolved.sort((a, b) => a - b);
  for (let i = 0; i < resolved.length; i += IDS_PER_STATEMENT) {
    const reopened = await trx.updateTable('error_triage')
      .set({ triage_status: 'unresolved', regressed_at: at, resolved_at: null, resolved_by_id: null, resolved_in_release: null, updated_at: at })
      .where('error_id', 'in', resolved.slice(i, i + IDS_PER_STATEMENT)).where('triage_status', '=', 'resolved')
      .returning('error_id')
      .execute();
    for (const { error_id: id } of reopened) {
      result.set(Number(id), { status: 'unresolved', regressed: true });
      activity.push({ error_id: Number(id), at, actor_id: null, action: 'regression', details: details({ from: 'resolved', to: 'unresolved' }) });
    }
  }
  const waking = [...due.keys()].sort((a, b) => a - b);
  for (let i = 0; i < waking.length; i += IDS_PER_STATEMENT) {
    const woken = await trx.updateTable('error_triage')
      .set({ triage_status: 'unresolved', snoozed_until: null, snooze_occurrences: null, snooze_until_counter: null, updated_at: at })
      .where('error_id', 'in', waking.slice(i, i + IDS_PER_STATEMENT)).where('triage_status', '=', 'snoozed')
      .returning('error_id')
      .execute();
    for (const { error_id: id } of woken) {
      result.set(Number(id), { status: 'unresolved', regressed: false });
      activity.push({ error_id: Number(id), at, actor_id: null, action: 'status', details: details({ from: 'snoozed', to: 'unresolved', reason: due.get(Number(id)) }) });
    }
  }
  activity.sort((a, b) => a.error_id - b.error_id);
  for (let i = 0; i < activity.length; i += IDS_PER_STATEMENT) await trx.insertInto('error_activity').values(activity.slice(i, i + IDS_PER_STATEMENT)).execute();
  return result;
}
