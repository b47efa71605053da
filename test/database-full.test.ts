import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DatabaseUnavailable } from '../src/db/dialects/connection/database-unavailable.js';
import { createTestApp, type TestApp } from './support/app.js';
import { onPostgres } from './support/database.js';
import { ERRORS, JSON_TYPE, report, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';

const FULL_JSON = '{"errors":{"base":["Service unavailable: the database is full; try again later"]}}';
const FULL_XML = `${XML_DECLARATION}<errors>\n  <error>Service unavailable: the database is full; try again later</error>\n</errors>\n`;

/**
 * A full database (docs/operations.md#when-the-database-is-sick): a write answers 503 "the database
 * is full" with Retry-After in the format asked for, is not recorded as a fault, and the same request
 * succeeds once there is room. SQLite is filled by `max_page_count` at its size now (its own
 * connection is the app's: the test's pragma is the app's); PostgreSQL by triggers raising its
 * disk_full SQLSTATE (53100), dropped to make room.
 */
describe('a full database', () => {
  let t: TestApp;
  /** Makes the database full: nothing more fits in it, from now on. */
  const fill = async () => {
    if (onPostgres) {
      await sql`create function disk_full() returns trigger language plpgsql as $$ begin raise exception 'could not extend file: No space left on device' using errcode = '53100'; end $$`.execute(t.database.db);
      for (const table of ['error_notes', 'infrastructure_errors', 'filler']) {
        await sql`create trigger ${sql.raw(`${table}_disk_full`)} before insert on ${sql.table(table)} for each row execute function disk_full()`.execute(t.database.db);
      }
    } else {
      const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(t.database.db);
      await sql.raw(`pragma max_page_count = ${rows[0]?.page_count}`).execute(t.database.db);
    }
  };
  /** Frees room again. */
  const makeRoom = async () => {
    if (onPostgres) await sql`drop function disk_full() cascade`.execute(t.database.db);
    else await sql`pragma max_page_count = 1073741823`.execute(t.database.db);
  };
  const addNote = (format: 'json' | 'xml', body: string) => t.app.inject({
    method: 'POST',
    url: `${ERRORS}/1/notes.${format}`,
    headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
    payload: JSON.stringify({ note: { body } }),
  });
  // A row larger than a page, so it needs pages a full SQLite file does not have.
  const large = 'n'.repeat(9000);

  before(async () => {
    t = await createTestApp();
    assert.equal((await report(t, { error_class: 'Before', message: 'recorded while there was room' })).statusCode, 201);
    // A table of the test's own, with no trigger, index or AUTOINCREMENT: an insert into it that does
    // not fit is one SQLite answers by rolling back the whole transaction itself.
    await sql`create table filler (body text not null)`.execute(t.database.db);
    await fill();
  });
  after(async () => {
    await t.close();
  });

  it('answers a write 503 "the database is full" with Retry-After, in JSON and in XML', async () => {
    const json = await addNote('json', large);
    assert.equal(json.statusCode, 503);
    assert.equal(json.headers['retry-after'], '5');
    assert.equal(json.headers['content-type'], JSON_TYPE);
    assert.equal(json.body, FULL_JSON);
    const xml = await addNote('xml', large);
    assert.equal(xml.statusCode, 503);
    assert.equal(xml.headers['retry-after'], '5');
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.body, FULL_XML);
    const reported = await report(t, { error_class: 'DiskFull', message: large });
    assert.equal(reported.statusCode, 503);
    assert.equal(reported.body, FULL_JSON);
  });

  it('answers a transaction SQLite rolled back itself with the error that ended it, not the rollback\'s', async () => {
    // SQLITE_FULL in a statement SQLite cannot undo alone (as in a commit that found the disk full)
    // rolls the whole transaction back: a `rollback` after it failed with "no transaction is active",
    // and that error, a 500, hid the full database.
    const insert = () => t.database.db.transaction().execute(async (trx) => {
      await sql`insert into filler (body) values (${large})`.execute(trx);
    });
    await assert.rejects(insert(), (error) => error instanceof DatabaseUnavailable && error.reason === 'the database is full');
    // The connection is usable at once, and what failed was not kept.
    assert.deepEqual((await sql<{ n: number | string }>`select count(*) as n from filler`.execute(t.database.db)).rows.map((r) => Number(r.n)), [0]);
  });

  it('records no fault, loses nothing acknowledged, and serves the same requests once there is room', async () => {
    await makeRoom();
    const note = await addNote('json', large);
    assert.equal(note.statusCode, 201, note.body);
    assert.equal((await report(t, { error_class: 'DiskFull', message: large })).statusCode, 201);
    await t.database.db.transaction().execute(async (trx) => {
      await sql`insert into filler (body) values (${large})`.execute(trx);
    });
    await t.app.faults.flush();
    const errors = await t.database.db.selectFrom('infrastructure_errors').select('error_class').orderBy('id').execute();
    assert.deepEqual(errors.map((e) => e.error_class), ['Before', 'DiskFull']);
    const notes = await t.database.db.selectFrom('error_notes').select(['error_id', 'body']).execute();
    assert.deepEqual(notes, [{ error_id: 1, body: large }]);
  });
});
