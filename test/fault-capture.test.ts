import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { backtraceFromStack } from '../src/tracker/grouping.js';
import { createTestApp, type TestApp } from './support/app.js';

describe('faults of the service', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
    // A real fault: a row the code cannot render (an unparseable timestamp) makes formatDatetime throw.
    await t.database.db.updateTable('users').set({ created_at: 'not a date' }).where('login', '=', 'alice').execute();
  });
  after(() => t.close());

  const list = (format: string, requestId: string) =>
    t.app.inject({ url: `/users.${format}`, headers: { authorization: t.adminAuth, 'x-request-id': requestId } });
  // Faults are held in memory and written within a second (docs/operations.md#faults-of-cmi): written now.
  const errors = async () => {
    await t.app.faults.flush();
    return t.database.db.selectFrom('infrastructure_errors').selectAll().orderBy('id').execute();
  };

  it('answers 500 with only the request id, in JSON', async () => {
    const res = await list('json', 'fault-1');
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['x-request-id'], 'fault-1');
    assert.equal(res.headers.status, '500 Internal Server Error');
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.body, '{"errors":{"base":["Internal server error (request fault-1)"]}}');
    // The list headers set before the fault describe an answer that was not given.
    for (const header of ['x-total', 'x-limit', 'x-page', 'link', 'etag']) assert.equal(res.headers[header], undefined, header);
  });

  it('records the fault with its class, message and a backtrace of path:line:in \'function\' frames (docs/api.md#infrastructure-errors)', async () => {
    const [record, ...others] = await errors();
    assert.equal(others.length, 0);
    assert.ok(record);
    assert.equal(record.error_class, 'RangeError');
    assert.equal(record.message, 'Invalid time value');
    assert.equal(record.counter, 1);
    assert.match(record.fingerprint, /^[0-9a-f]{64}$/);
    const frames = record.backtrace.split('\n');
    assert.match(frames[0] as string, /^src\/http\/render\/datetime\.ts:\d+:in '.*formatDatetime'$/);
    for (const frame of frames) assert.match(frame, /^\S.*:\d+:in '.+'$/);
  });

  it('counts the same fault again under the same record', async () => {
    const res = await list('json', 'fault-2');
    assert.equal(res.statusCode, 500);
    const records = await errors();
    assert.equal(records.length, 1);
    assert.equal(records[0]?.counter, 2);
  });

  it('answers XML when asked; the XML renderer is another code path, so another record', async () => {
    const res = await list('xml', 'fault-3');
    assert.equal(res.statusCode, 500);
    assert.equal(res.body, '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Internal server error (request fault-3)</error>\n</errors>\n');
    const records = await errors();
    assert.equal(records.length, 2);
    assert.match(records[1]?.backtrace ?? '', /^src\/http\/render\/datetime\.ts:\d+:in '.*formatDatetime'\nsrc\/http\/render\/xml\.ts:/);
  });

  it('can be read back through the sysadmin tools', async () => {
    const [record] = await errors();
    assert.equal(record?.counter, 2);
    const res = await t.app.inject({ url: `/sysadmin_tools/infrastructure/errors/${record?.id}.json`, headers: { authorization: t.adminAuth } });
    assert.equal(res.statusCode, 200);
    const body = (JSON.parse(res.body) as { infrastructure_error: { error_class: string; counter: number } }).infrastructure_error;
    assert.equal(body.error_class, 'RangeError');
    assert.equal(body.counter, 2);
  });
});

describe('backtraceFromStack', () => {
  it('writes V8 frames as `location:line:in \'operation\'`, relative to the project, up to the outermost own frame', () => {
    const root = new URL('../', import.meta.url).pathname;
    const stack = [
      'TypeError: boom',
      `    at findUser (${root}src/store/users.ts:42:17)`,
      `    at async Object.list (file://${root}src/server/routes/users.ts:18:5)`,
      '    at node_modules/kysely/dist/esm/query-executor.js:12:3',
      `    at Object.list (${root}src/server/routes/users.ts:18:5)`,
      '    at hookIterator (/srv/cmi/node_modules/fastify/lib/hooks.js:405:10)',
      '    at node:internal/process/task_queues:95:5',
    ].join('\n');
    assert.equal(
      backtraceFromStack(stack),
      "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'async Object.list'\n" +
        "node_modules/kysely/dist/esm/query-executor.js:12:in '<anonymous>'\nsrc/server/routes/users.ts:18:in 'Object.list'",
    );
  });
});
