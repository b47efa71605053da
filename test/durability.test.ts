import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startServer } from './support/cli.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

// Every write cmi acknowledged with a 2xx is committed (docs/operations.md#stopping): a `cmi serve`
// killed with SIGKILL in the middle of concurrent writes loses none of them.
const ADMIN = { login: 'root', email: 'root@example.com', password: 'durable-password' };
const AUTH = `Basic ${Buffer.from(`${ADMIN.login}:${ADMIN.password}`).toString('base64')}`;
const CLASSES = ['DiskFull', 'Timeout', 'HypervisorDown', 'NetworkPartition'];
/** Writers of each kind kept busy at once. */
const CONCURRENCY = 6;
/** Acknowledged writes to wait for before the kill. */
const ACKNOWLEDGED_BEFORE_KILL = 40;

describe('durability: SIGKILL during concurrent writes', () => {
  let fresh: FreshDatabase;
  let env: Record<string, string>;
  before(async () => {
    fresh = await freshDatabase();
    env = { DATABASE_URL: fresh.url, CMI_ADMIN_LOGIN: ADMIN.login, CMI_ADMIN_EMAIL: ADMIN.email, CMI_ADMIN_PASSWORD: ADMIN.password };
  });
  after(() => fresh.drop());

  it('keeps every write that got a 2xx: users by login, error counters per fingerprint', async () => {
    const server = await startServer(env);
    const post = (path: string, body: unknown) =>
      fetch(`${server.baseUrl}${path}`, { method: 'POST', headers: { authorization: AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const acknowledgedLogins: string[] = [];
    /** Acknowledged reports per error id (one id per fingerprint). */
    const acknowledgedReports = new Map<number, number>();
    let acknowledged = 0;
    let killed = false;
    let sent = 0;
    let reachedKillPoint!: () => void;
    const killPoint = new Promise<void>((resolve) => (reachedKillPoint = resolve));
    const acknowledge = () => {
      acknowledged += 1;
      if (acknowledged === ACKNOWLEDGED_BEFORE_KILL) reachedKillPoint();
    };

    async function writeUsers(writer: number): Promise<void> {
      for (let i = 0; !killed; i++) {
        const login = `durable${writer}x${i}`;
        sent += 1;
        const res = await post('/users.json', { user: { login, email: `${login}@example.com`, password: 'durable-user-password' } }).catch(() => undefined);
        if (res === undefined) return; // the connection died with the server: not acknowledged
        await res.arrayBuffer().catch(() => undefined);
        if (res.status === 201) {
          acknowledgedLogins.push(login);
          acknowledge();
        } else if (!killed) assert.fail(`POST /users answered ${res.status}`);
      }
    }

    async function writeReports(writer: number): Promise<void> {
      for (let i = 0; !killed; i++) {
        sent += 1;
        const report = { error_class: CLASSES[(writer + i) % CLASSES.length], message: 'durability', backtrace: `writer ${writer}` };
        const res = await post('/sysadmin_tools/infrastructure/errors.json', { infrastructure_error: report }).catch(() => undefined);
        if (res === undefined) return;
        const body = (await res.json().catch(() => undefined)) as { infrastructure_error?: { id: number } } | undefined;
        if ((res.status === 200 || res.status === 201) && body?.infrastructure_error) {
          const { id } = body.infrastructure_error;
          acknowledgedReports.set(id, (acknowledgedReports.get(id) ?? 0) + 1);
          acknowledge();
        } else if (!killed) assert.fail(`POST errors answered ${res.status}`);
      }
    }

    const writers = Array.from({ length: CONCURRENCY }, (_, writer) => [writeUsers(writer), writeReports(writer)]).flat();
    await killPoint;
    // Mid-stream: every writer has a request in flight.
    killed = true;
    server.child.kill('SIGKILL');
    await Promise.all(writers);
    assert.ok(sent > acknowledged, `requests were in flight at the kill (${sent} sent, ${acknowledged} acknowledged)`);

    const restarted = await startServer(env);
    try {
      const get = async (path: string): Promise<unknown> => {
        const res = await fetch(`${restarted.baseUrl}${path}`, { headers: { authorization: AUTH } });
        assert.equal(res.status, 200, path);
        return res.json();
      };
      const users = (await get('/users.json?per_page=1000')) as Array<{ user: { login: string } }>;
      const logins = new Set(users.map((entry) => entry.user.login));
      for (const login of acknowledgedLogins) assert.ok(logins.has(login), `acknowledged user ${login} is there`);
      for (const [id, count] of acknowledgedReports) {
        const { infrastructure_error: record } = (await get(`/sysadmin_tools/infrastructure/errors/${id}.json`)) as { infrastructure_error: { counter: number } };
        assert.ok(record.counter >= count, `error ${id}: counter ${record.counter} >= ${count} acknowledged`);
      }
      assert.ok(acknowledgedLogins.length > 0 && acknowledgedReports.size > 0, 'both kinds of write were acknowledged');
    } finally {
      await restarted.stop();
    }
  });
});
