import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { CONFLICT_ATTEMPTS, retryingConflicts } from '../src/db/conflicts.js';
import { databasePerTest, onPostgres } from './support/database.js';

/** A promise and the function that settles it: one step of two transactions taking turns. */
function signal(): { done: Promise<void>; give: () => void } {
  let give = () => {};
  const done = new Promise<void>((resolve) => (give = resolve));
  return { done, give };
}

describe('a transaction PostgreSQL rolls back for a deadlock is run again (db/conflicts.ts)', () => {
  const context = databasePerTest();

  it('two transactions that lock two rows crosswise both commit, one of them on its second try', { skip: !onPostgres && 'SQLite takes one writer at a time: no deadlock' }, async () => {
    const { db } = context.database;
    await sql`create table counts (k varchar(8) primary key, n integer not null)`.execute(db);
    await sql`insert into counts values ('a', 0), ('b', 0)`.execute(db);
    const bump = (k: string) => (trx: typeof db) => sql`update counts set n = n + 1 where k = ${k}`.execute(trx);
    const firstHoldsA = signal();
    const secondHoldsB = signal();
    const tries = { first: 0, second: 0 };
    // The first locks a, then b; the second b, then a: whichever PostgreSQL picks is rolled back, and its
    // second try (the signals given by then) waits for the other's commit and goes through.
    const first = retryingConflicts(() => db.transaction().execute(async (trx) => {
      tries.first += 1;
      await bump('a')(trx);
      firstHoldsA.give();
      await secondHoldsB.done;
      await bump('b')(trx);
    }));
    const second = retryingConflicts(() => db.transaction().execute(async (trx) => {
      tries.second += 1;
      await firstHoldsA.done;
      await bump('b')(trx);
      secondHoldsB.give();
      await bump('a')(trx);
    }));
    await Promise.all([first, second]);
    assert.equal(tries.first + tries.second, 3, `tries: ${JSON.stringify(tries)}`);
    const { rows } = await sql<{ k: string; n: number }>`select k, n from counts order by k`.execute(db);
    assert.deepEqual(rows, [{ k: 'a', n: 2 }, { k: 'b', n: 2 }]);
  });

  it(`a conflict on every try is answered as the error after ${CONFLICT_ATTEMPTS} tries; any other error at once`, async () => {
    let tries = 0;
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    await assert.rejects(retryingConflicts(() => { tries += 1; return Promise.reject(deadlock); }), (error) => error === deadlock);
    assert.equal(tries, CONFLICT_ATTEMPTS);
    tries = 0;
    const unique = Object.assign(new Error('duplicate key'), { code: '23505' });
    await assert.rejects(retryingConflicts(() => { tries += 1; return Promise.reject(unique); }), (error) => error === unique);
    assert.equal(tries, 1);
  });
});
