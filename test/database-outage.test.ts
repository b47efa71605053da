import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { type RunningServer, startServer } from './support/cli.js';
import { onPostgres } from './support/database.js';
import { eventually } from './support/eventually.js';
import { type ThrowawayPostgres, throwawayPostgres } from './support/throwaway-postgres.js';

const PASSWORD = 'outage-password';
const AUTH = `Basic ${Buffer.from(`admin:${PASSWORD}`).toString('base64')}`;
const UNAVAILABLE = (reason: string) => `{"errors":{"base":["Service unavailable: ${reason}; try again later"]}}`;

/** A PostgreSQL server of the test's own that hangs or goes away (docs/operations.md#when-the-database-is-sick). */
describe('a PostgreSQL that hangs or goes away', { skip: !onPostgres && 'runs with the PostgreSQL suite', timeout: 600_000 }, () => {
  let pg: ThrowawayPostgres;
  let server: RunningServer | undefined;
  const started: RunningServer[] = [];
  /** Starts `cmi serve` on the throwaway database; every server started is stopped after the suite. */
  const serve = async (env: Record<string, string>, args: string[] = []) => {
    server = await startServer({ DATABASE_URL: pg.url, CMI_ADMIN_PASSWORD: PASSWORD, CMI_DB_STATEMENT_TIMEOUT: '1000', ...env }, args);
    started.push(server);
    return server;
  };
  before(async () => {
    pg = await throwawayPostgres();
  });
  after(async () => {
    pg.freeze(false);
    for (const running of started) {
      if (running.child.exitCode !== null || running.child.signalCode !== null) continue;
      // A server a failed test left in a bad state must not keep the suite (and its process) waiting.
      const kill = setTimeout(() => running.child.kill('SIGKILL'), 10_000);
      await running.stop();
      clearTimeout(kill);
    }
    pg.destroy();
  });

  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server?.baseUrl}${path}`, { ...init, headers: { authorization: AUTH, ...init.headers } });
  const report = (errorClass: string) =>
    call('/sysadmin_tools/infrastructure/errors.json', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error_class: errorClass }),
    });

  it('frozen: every request is answered, writes 503 with Retry-After, readiness within its limit, liveness and what needs no database 200', async () => {
    const running = await serve({ CMI_AUTH_CACHE_TTL: '300' });
    await eventually(async () => assert.equal((await report('Warmup')).status, 201));
    // The credential is verified now and trusted for 300 s: what follows is about the database.
    assert.equal((await call('/version.json')).status, 200);
    pg.freeze(true);
    try {
      const writes = await Promise.all(Array.from({ length: 8 }, (_, i) => report(`Frozen${i}`)));
      for (const res of writes) {
        assert.equal(res.status, 503);
        assert.equal(res.headers.get('retry-after'), '5');
        assert.equal(await res.text(), UNAVAILABLE('the database did not answer in time'));
      }
      const ready = await fetch(`${running.baseUrl}/health/ready.json`);
      assert.equal(ready.status, 503);
      assert.equal(await ready.text(), '{"status":"database not answering","schema_version":null}');
      assert.equal((await fetch(`${running.baseUrl}/health/live.json`)).status, 200);
      assert.equal((await call('/version.json')).status, 200);
    } finally {
      pg.freeze(false);
    }
    await eventually(async () => assert.equal((await report('Thawed')).status, 201), 15_000, 200);
    // Readiness may still give, for up to a second, the answer of a check begun while frozen.
    await eventually(async () => assert.equal((await fetch(`${running.baseUrl}/health/ready.json`)).status, 200), 5000, 200);
    assert.equal(await running.stop(), 0);
  });

  it('gone: a worker replaced during the outage starts anyway, and the server serves again when the database returns', async () => {
    const running = await serve({}, ['--workers', '2']);
    assert.equal((await call('/version.json')).status, 200);
    pg.stop();
    const workers = execFileSync('pgrep', ['-P', String(running.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number);
    assert.equal(workers.length, 2);
    process.kill(workers[0] as number, 'SIGKILL');
    await eventually(() => assert.match(running.output, /cmi: worker \d+ listens in place of one that exited/), 15_000, 100);
    const ready = await fetch(`${running.baseUrl}/health/ready.json`);
    assert.equal(ready.status, 503);
    assert.equal(await ready.text(), '{"status":"database unreachable","schema_version":null}');
    const write = await report('WhileGone');
    assert.equal(write.status, 503);
    assert.equal(write.headers.get('retry-after'), '5');

    pg.start();
    // Every worker, the replacement too, serves again: a dozen requests reach both.
    await eventually(async () => {
      for (let i = 0; i < 12; i++) assert.equal((await fetch(`${running.baseUrl}/health/ready.json`)).status, 200);
    }, 20_000, 200);
    for (let i = 0; i < 6; i++) assert.equal((await call('/users.json')).status, 200);
    assert.equal((await report('Back')).status, 201);
    assert.equal(running.errors.match(/exited/g)?.length, 1, running.errors);
  });
});
