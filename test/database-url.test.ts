import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dialectFor, displayDatabaseUrl } from '../src/db/database-url.js';

describe('DATABASE_URL', () => {
  it('is printed without a password', () => {
    assert.equal(displayDatabaseUrl('postgres://cmi:s3cret@db.internal:5432/cmi'), 'postgres://cmi:***@db.internal:5432/cmi');
    assert.equal(displayDatabaseUrl('postgres://postgres@127.0.0.1:5432/test'), 'postgres://postgres@127.0.0.1:5432/test');
    assert.equal(displayDatabaseUrl('sqlite:./data/cmi.sqlite3'), 'sqlite:./data/cmi.sqlite3');
    assert.equal(displayDatabaseUrl('mysql://root:hunter2@db/cmi'), 'mysql://root:***@db/cmi');
    assert.equal(displayDatabaseUrl('postgres://u:p@[bad/cmi'), 'postgres://***@[bad/cmi');
  });

  it('names SQLite files relative to the working directory, and PostgreSQL by URL', () => {
    const named = (url: string) => {
      const dialect = dialectFor(url);
      return { name: dialect.name, target: dialect.target };
    };
    assert.deepEqual(named('sqlite:data/x.sqlite3'), { name: 'sqlite', target: `${process.cwd()}/data/x.sqlite3` });
    assert.deepEqual(named('sqlite:///tmp/x.sqlite3'), { name: 'sqlite', target: '/tmp/x.sqlite3' });
    assert.deepEqual(named('postgresql://u@h/d'), { name: 'postgres', target: 'postgresql://u@h/d' });
    assert.throws(() => dialectFor('sqlite:'), /needs a file path/);
    assert.throws(() => dialectFor('postgres://'), /must start with sqlite: or postgres:\/\//);
    assert.throws(() => dialectFor('mysql://h/d'), /must start with sqlite: or postgres:\/\//);
  });
});
