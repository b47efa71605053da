import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { displayDatabaseUrl, parseDatabaseUrl } from '../src/store/database.js';

describe('DATABASE_URL', () => {
  it('is printed without a PostgreSQL password', () => {
    assert.equal(displayDatabaseUrl('postgres://cmi:s3cret@db.internal:5432/cmi'), 'postgres://cmi:***@db.internal:5432/cmi');
    assert.equal(displayDatabaseUrl('postgres://postgres@127.0.0.1:5432/test'), 'postgres://postgres@127.0.0.1:5432/test');
    assert.equal(displayDatabaseUrl('sqlite:./data/cmi.sqlite3'), 'sqlite:./data/cmi.sqlite3');
  });

  it('names SQLite files relative to the working directory, and PostgreSQL by URL', () => {
    assert.deepEqual(parseDatabaseUrl('sqlite:data/x.sqlite3'), { dialect: 'sqlite', path: `${process.cwd()}/data/x.sqlite3` });
    assert.deepEqual(parseDatabaseUrl('sqlite:///tmp/x.sqlite3'), { dialect: 'sqlite', path: '/tmp/x.sqlite3' });
    assert.deepEqual(parseDatabaseUrl('postgresql://u@h/d'), { dialect: 'postgres', url: 'postgresql://u@h/d' });
    assert.throws(() => parseDatabaseUrl('sqlite:'), /needs a file path/);
    assert.throws(() => parseDatabaseUrl('mysql://h/d'), /must start with sqlite: or postgres:\/\//);
  });
});
