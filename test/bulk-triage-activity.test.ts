import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/database.js';
import type { ErrorReport } from '../src/tracker/infrastructure-error.js';
import { trackerRepository } from '../src/tracker/tracker.store.js';
import { triageRepository } from '../src/tracker/triage.store.js';
import { type FreshDatabase, migratedDatabase, onPostgres } from './support/database.js';
import { eventually } from './support/eventually.js';

const SAMPLE = { first: 10, latest: 100 };
const AT = Date.parse('2026-11-20T10:00:00.000Z');
const ERRORS = 400;
/** Resolved errors reported again (so reopened) while the bulk change runs, each a batch of its own. */
const REGRESSIONS = 10;

const fingerprint = (i: number) => i.toString(16).padStart(64, '0');
/** Error i: class Even or Odd. */
const reportOf = (i: number): ErrorReport => ({
  fingerprint: fingerprint(i), error_class: i % 2 === 0 ? 'Even' : 'Odd', message: `volume ${i} detached`, backtrace: '',
  occurred_at: new Date(AT), count: 1, host: 'hv-1', component: 'storage', request_id: null, context: null,
});

/**
 * A bulk triage change by filter while reports make errors regress (docs/api.md#error-triage): every
 * error it changes has its activity row, and the count it answers is exactly those errors. On
 * PostgreSQL, under READ COMMITTED, the activity's insert and the update each chose the errors anew,
 * so an error that regressed between them was changed with no activity row. The test holds the bulk
 * change in its first write (a trigger of the test's waits for an advisory lock the test holds) while
 * the regressions commit; on SQLite the bulk change's transaction holds the write lock, and the
 * regressions run after it.
 */
describe('a bulk triage change by filter during regressions', () => {
  let fresh: FreshDatabase;
  let database: Database;
  before(async () => {
    fresh = await migratedDatabase();
    database = openDatabase(loadConfig({ DATABASE_URL: fresh.url }));
  });
  after(async () => {
    await database.close();
    await fresh.drop();
  });

  it('writes one activity row for each error it changes, and counts exactly those', async () => {
    const db = database.db;
    const errors = trackerRepository(database);
    const triage = triageRepository(database);
    await errors.recordBatch(Array.from({ length: ERRORS }, (_, k) => reportOf(k)), SAMPLE, undefined, new Date(AT));
    // The odd ones resolved: a report of one reopens it (unresolved), so the filter below would select it.
    assert.equal(await triage.changeMany({ filters: { errorClass: 'Odd' } }, { status: 'resolved' }, null, new Date(AT + 1000)), ERRORS / 2);
    const regress = async () => {
      for (let k = 0; k < REGRESSIONS; k++) await errors.recordBatch([reportOf(2 * k + 1)], SAMPLE, undefined, new Date(AT + 1500));
    };

    const bulkAt = new Date(AT + 2000);
    const bulk = () => triage.changeMany({ filters: { status: 'unresolved' } }, { status: 'ignored' }, null, bulkAt);
    let changed: number;
    if (onPostgres) {
      const key = randomInt(1, 2 ** 31);
      // The bulk change's first write waits for the test's advisory lock: its activity insert (made
      // apart from its update, as before) or its first row's update. The lock is the transaction's
      // then, so its other writes go on.
      await sql`create function hold_bulk_activity() returns trigger language plpgsql as $$
        begin
          if exists (select 1 from inserted where action = 'status' and details like '%"to":"ignored"%') then
            perform pg_advisory_xact_lock(${sql.lit(key)});
          end if;
          return null;
        end $$`.execute(db);
      await sql`create trigger hold_bulk_activity after insert on error_activity referencing new table as inserted
        for each statement execute function hold_bulk_activity()`.execute(db);
      await sql`create function hold_bulk_update() returns trigger language plpgsql as $$
        begin
          if new.triage_status = 'ignored' then perform pg_advisory_xact_lock(${sql.lit(key)}); end if;
          return new;
        end $$`.execute(db);
      await sql`create trigger hold_bulk_update before update on error_triage for each row execute function hold_bulk_update()`.execute(db);
      changed = await db.connection().execute(async (holder) => {
        await sql`select pg_advisory_lock(${key})`.execute(holder);
        const running = bulk();
        // The bulk change waits in its first write.
        await eventually(async () => {
          const { rows } = await sql<{ n: number | string }>`select count(*) as n from pg_locks where locktype = 'advisory' and objid = ${key} and not granted`.execute(db);
          assert.equal(Number(rows[0]?.n), 1, 'the bulk change waits for the lock');
        });
        await regress();
        await sql`select pg_advisory_unlock(${key})`.execute(holder);
        return running;
      });
    } else {
      [changed] = await Promise.all([bulk(), regress()]);
    }

    const activity = await db.selectFrom('error_activity').select('error_id')
      .where('at', '=', bulkAt.toISOString()).where('action', '=', 'status').orderBy('error_id').execute();
    const ignored = await db.selectFrom('error_triage').select('error_id').where('triage_status', '=', 'ignored').orderBy('error_id').execute();
    const regressed = await db.selectFrom('error_activity').select((eb) => eb.fn.countAll<number | string>().as('n')).where('action', '=', 'regression').executeTakeFirstOrThrow();
    assert.equal(Number(regressed.n), REGRESSIONS, 'every report of a resolved error reopened it');
    assert.deepEqual({ activity: activity.length, ignored: ignored.length }, { activity: changed, ignored: changed }, `changed: ${changed}`);
    assert.deepEqual(activity.map((row) => Number(row.error_id)), ignored.map((row) => Number(row.error_id)));
  });
});
