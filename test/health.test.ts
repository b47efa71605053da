import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestApp, type TestApp } from './support/app.js';

describe('health probes', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('GET /health/live answers 200 without credentials, with the headers of every 200 GET', async () => {
    const res = await t.app.inject({ url: '/health/live' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'max-age=0, private, must-revalidate');
    assert.match(String(res.headers.etag), /^W\/"[0-9a-f]{40}"$/);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.body, '{"status":"ok"}');
    const xml = await t.app.inject({ url: '/health/live.xml' });
    assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<health>\n  <status>ok</status>\n</health>\n');
  });

  it('GET /health/ready answers 200 when the database answers and is migrated, with its schema version', async () => {
    const { rows } = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(t.database.db);
    const latest = rows[0]?.name;
    assert.match(String(latest), /^\d{3}_/);
    const res = await t.app.inject({ url: '/health/ready' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, `{"status":"ok","schema_version":"${latest}"}`);
    t.time.advance(1);
    const xml = await t.app.inject({ url: '/health/ready.xml' });
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>\n<health>\n  <status>ok</status>\n  <schema_version>${latest}</schema_version>\n</health>\n`);
  });

  it('GET /health/ready reuses its answer for a second: probes cannot make the database work harder', async () => {
    const before = await t.app.inject({ url: '/health/ready' });
    await sql`delete from kysely_migration where name = '002_sessions_and_lockout'`.execute(t.database.db);
    const res = await t.app.inject({ url: '/health/ready' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, before.body);
  });

  it('GET /health/ready answers 503 when a migration is missing', async () => {
    t.time.advance(1);
    const res = await t.app.inject({ url: '/health/ready' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.headers['cache-control'], 'no-cache');
    const { rows } = await sql<{ name: string }>`select max(name) as name from kysely_migration`.execute(t.database.db);
    assert.equal(res.body, `{"status":"migrations pending","schema_version":"${rows[0]?.name}"}`);
  });

  it('GET /health/ready answers 503 when the database is gone', async () => {
    t.time.advance(1);
    await t.database.close();
    const res = await t.app.inject({ url: '/health/ready' });
    assert.equal(res.statusCode, 503);
    assert.equal(res.body, '{"status":"database unreachable","schema_version":null}');
    const xml = await t.app.inject({ url: '/health/ready.xml' });
    assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<health>\n  <status>database unreachable</status>\n  <schema_version nil="true"/>\n</health>\n');
  });

  it('is the only thing without credentials: other paths still answer 401', async () => {
    const res = await t.app.inject({ url: '/health/other' });
    assert.equal(res.statusCode, 401);
  });
});
