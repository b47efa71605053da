import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildApp } from '../src/app/app.js';
import { createTestApp } from './support/app.js';
import { get, tokenOf, withCookie } from './support/http.js';
import { validateResponses } from './support/response-validation.js';

const LINE_KEYS = ['time', 'method', 'route', 'status', 'duration_ms', 'request_id', 'user_id', 'actor_id', 'bytes'];

describe('the access log (CMI_ACCESS_LOG=1)', () => {
  it('writes one JSON line a request with method, route pattern, status, duration, request id, user id, actor id (as the audit trail names it) and bytes; never a credential, cookie or body', async () => {
    const t = await createTestApp();
    // A second app on the same database with the access log on, writing its lines here.
    const lines: string[] = [];
    const app = await buildApp({ config: { ...t.config, accessLog: true }, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: false, writeAccessLog: (line) => lines.push(line) });
    try {
      const first = await get(app, `/users/${t.alice.id}.json?secret=query-secret`, { authorization: t.aliceAuth, 'x-request-id': 'req-1' });
      assert.equal(first.statusCode, 200);
      const token = tokenOf(first);
      await get(app, '/version.xml', { ...withCookie(token), 'x-request-id': 'req-2' });
      await get(app, '/no/such/thing.json', { authorization: t.basic('alice', 'wrong-password-here'), 'x-request-id': 'req-3' });
      await app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json', 'x-request-id': 'req-4' }, body: '{"password":"body-password-1234"}' });

      assert.equal(lines.length, 4);
      assert.ok(lines.every((line) => line.endsWith('}\n') && !line.slice(0, -1).includes('\n')));
      const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      for (const record of records) {
        assert.deepEqual(Object.keys(record), LINE_KEYS);
        assert.match(String(record.time), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        assert.equal(typeof record.duration_ms, 'number');
      }
      const strip = (record: Record<string, unknown>) => Object.fromEntries(Object.entries(record).filter(([key]) => key !== 'time' && key !== 'duration_ms'));
      assert.deepEqual(records.map(strip), [
        { method: 'GET', route: '/users/:id', status: 200, request_id: 'req-1', user_id: t.alice.id, actor_id: t.alice.id, bytes: Buffer.byteLength(first.body) },
        { method: 'GET', route: '/version', status: 200, request_id: 'req-2', user_id: t.alice.id, actor_id: t.alice.id, bytes: records[1]?.bytes },
        { method: 'GET', route: 'unmatched', status: 401, request_id: 'req-3', user_id: null, actor_id: null, bytes: 37 },
        { method: 'PUT', route: '/users/:id', status: 204, request_id: 'req-4', user_id: t.admin.id, actor_id: t.admin.id, bytes: null },
      ]);
      assert.ok(Number(records[1]?.bytes) > 0);
      const all = lines.join('');
      for (const secret of ['alice-password', 'query-secret', token, 'wrong-password-here', 'body-password-1234', 'Basic', 'cookie']) assert.ok(!all.includes(secret), secret);
    } finally {
      await app.close();
      await t.close();
    }
  });

  it('is off by default: no line is written', async () => {
    const t = await createTestApp();
    const lines: string[] = [];
    const app = await buildApp({ config: t.config, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: false, writeAccessLog: (line) => lines.push(line) });
    try {
      assert.equal(t.config.accessLog, false);
      assert.equal((await get(app, '/version.json', { authorization: t.adminAuth })).statusCode, 200);
      assert.deepEqual(lines, []);
    } finally {
      await app.close();
      await t.close();
    }
  });
});
