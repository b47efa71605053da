import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import { withStatementCache } from '../src/db/dialects/connection/sqlite-statement-cache.js';

describe('the SQLite statement cache', () => {
  it('prepares one SQL text once, keeps at most the given number, and answers as a fresh statement would', () => {
    const sqlite = new SQLite(':memory:');
    const database = withStatementCache(sqlite, 2);
    database.prepare('create table t (n integer)').run([]);
    const insert = database.prepare('insert into t (n) values (?)');
    assert.equal(database.prepare('insert into t (n) values (?)'), insert);
    for (const n of [1, 2, 3]) database.prepare('insert into t (n) values (?)').run([n]);
    assert.deepEqual(database.prepare('select n from t order by n').all([]), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    // Two texts since the insert (create table went first): the insert is the oldest now and went.
    database.prepare('select count(*) as c from t').all([]);
    assert.notEqual(database.prepare('insert into t (n) values (?)'), insert);
    database.close();
    assert.equal(sqlite.open, false);
  });
});
