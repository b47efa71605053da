import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  CmiAuthenticationError,
  CmiClient,
  CmiNotFoundError,
  CmiPermissionError,
  CmiRateLimitError,
  CmiServerError,
  CmiValidationError,
  type Format,
  type User,
} from '../src/client/index.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';

const START = new Date('2026-11-20T10:00:00Z');

/**
 * cmi/client against a real cmi on a random port of 127.0.0.1, every method, in JSON and in XML; the
 * same records must come out of both (docs/client.md).
 */
for (const format of ['json', 'xml'] as const satisfies Format[]) {
  describe(`CmiClient (${format}) against a real cmi`, () => {
    let t: TestApp;
    let baseUrl: string;
    let admin: CmiClient;
    before(async () => {
      t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
      baseUrl = `http://127.0.0.1:${await listenLocally(t.app)}`;
      admin = new CmiClient({ baseUrl, login: ADMIN.login, password: ADMIN.password, format });
    });
    after(() => t.close());

    it('version: the server\'s version, typed as a string', async () => {
      assert.equal(await admin.version(), '6.7');
    });

    it('users.get: every field typed, datetimes as Date, nulls as null, roles unwrapped', async () => {
      const alice = await admin.users.get(t.alice.id);
      assert.deepEqual(alice, {
        id: t.alice.id, login: 'alice', email: 'alice@example.com', first_name: 'Alice', last_name: 'User', status: 'active',
        time_zone: null, locale: null, created_at: START, updated_at: START, activated_at: START, suspend_at: null,
        deleted_at: null, password_changed_at: START, roles: [{
          ...t.systemRoles.user, created_at: new Date(t.systemRoles.user.created_at), updated_at: new Date(t.systemRoles.user.updated_at),
          permissions: t.systemRoles.user.permissions.map(({ permission }) => ({ ...permission, created_at: new Date(permission.created_at), updated_at: new Date(permission.updated_at) })),
        }],
        bucket_id: null,
        user_group_id: null,
        totp_enabled: false,
        registered_yubikey: false,
      } satisfies User);
    });

    it('users.list: { items, total, page, limit } from X-Total/X-Limit/X-Page', async () => {
      const page = await admin.users.list({ page: 2, perPage: 1 });
      assert.deepEqual([page.items.map((u) => u.login), page.total, page.page, page.limit, page.hasMore], [['alice'], 2, 2, 1, false]);
      const first = await admin.users.list();
      assert.deepEqual([first.items.map((u) => u.login), first.total, first.page, first.limit, first.hasMore], [['admin', 'alice'], 2, 1, 25, false]);
    });

    it('create, update, suspend, activate, makeNewApiKey, delete: the records each answers, and the server\'s state', async () => {
      const login = `grace-${format}`;
      const grace = await admin.users.create({ login, email: `${login}@example.com`, password: 'grace-password', first_name: 'Grace', time_zone: 'Europe/London', role: 'admin' });
      assert.deepEqual([grace.login, grace.first_name, grace.last_name, grace.time_zone, grace.roles[0]?.identifier, grace.status], [login, 'Grace', '', 'Europe/London', 'admin', 'active']);
      assert.equal(grace.created_at.getTime(), START.getTime());
      assert.equal(await admin.users.update(grace.id, { last_name: 'Hopper', locale: 'en' }), undefined);
      assert.deepEqual([(await admin.users.get(grace.id)).last_name, (await admin.users.get(grace.id)).locale], ['Hopper', 'en']);
      const suspended = await admin.users.suspend(grace.id);
      assert.equal(suspended.status, 'suspended');
      assert.equal(suspended.suspend_at?.getTime(), START.getTime());
      assert.equal((await admin.users.activate(grace.id)).status, 'active');
      const keyed = await admin.users.makeNewApiKey(grace.id);
      assert.match(keyed.api_key, /^\S{20,}$/);
      assert.equal('api_key' in (await admin.users.get(grace.id)), false);
      // The key works as the password, with the login.
      const withKey = new CmiClient({ baseUrl, login, apiKey: keyed.api_key, format });
      assert.equal((await withKey.users.get(grace.id)).login, login);
      assert.equal(await admin.users.delete(grace.id), undefined);
      assert.equal((await admin.users.get(grace.id)).status, 'deleted');
      await admin.users.delete(grace.id);
      await assert.rejects(admin.users.get(grace.id), CmiNotFoundError);
    });

    it('users.apiKeys: create (the key once), list and all (never the key), revoke (refused at once)', async () => {
      const made = await admin.users.apiKeys.create(t.alice.id, `ci ${format}`);
      assert.match(made.api_key, /^[0-9a-f]{64}$/);
      assert.deepEqual({ ...made, api_key: '' }, { id: made.id, user_id: t.alice.id, description: `ci ${format}`, default: false, created_at: START, last_used_at: null, api_key: '' });
      const withKey = new CmiClient({ baseUrl, login: ALICE.login, apiKey: made.api_key, format });
      assert.equal(await withKey.version(), '6.7');
      const page = await admin.users.apiKeys.list(t.alice.id, { perPage: 1 });
      assert.deepEqual([page.items.map((key) => key.description), page.total, page.limit], [[`ci ${format}`], 1, 1]);
      assert.equal('api_key' in page.items[0]!, false);
      const all = [];
      for await (const key of admin.users.apiKeys.all(t.alice.id)) all.push(key.id);
      assert.deepEqual(all, [made.id]);
      assert.equal(await admin.users.apiKeys.revoke(t.alice.id, made.id), undefined);
      await assert.rejects(withKey.version(), CmiAuthenticationError);
      await assert.rejects(admin.users.apiKeys.revoke(t.alice.id, made.id), CmiNotFoundError);
      const invalid = await admin.users.apiKeys.create(t.alice.id, '').catch((error: unknown) => error);
      assert.ok(invalid instanceof CmiValidationError);
    });

    it('errors: 401 with the request id, 403, 404, 422 with its field errors, 429 with Retry-After, each its class', async () => {
      const wrong = new CmiClient({ baseUrl, login: ALICE.login, password: 'wrong-password', format });
      const unauthorized = await wrong.version().catch((error: unknown) => error);
      assert.ok(unauthorized instanceof CmiAuthenticationError);
      assert.equal(unauthorized.status, 401);
      assert.match(unauthorized.requestId ?? '', /^[0-9a-f-]{36}$/);
      assert.deepEqual(unauthorized.errors, { base: ['Access denied'] });

      const alice = new CmiClient({ baseUrl, login: ALICE.login, password: ALICE.password, format });
      const forbidden = await alice.infrastructureErrors.list().catch((error: unknown) => error);
      assert.ok(forbidden instanceof CmiPermissionError);
      assert.deepEqual([forbidden.status, forbidden.errors], [403, { base: ['You are not authorized to perform this action (needs infrastructure_errors.read)'] }]);

      const missing = await admin.users.get(999_999).catch((error: unknown) => error);
      assert.ok(missing instanceof CmiNotFoundError);
      assert.deepEqual([missing.status, missing.errors], [404, { base: ['Resource not found'] }]);

      const invalid = await admin.users.create({ login: 'admin', email: 'nope', password: 'short' }).catch((error: unknown) => error);
      assert.ok(invalid instanceof CmiValidationError);
      assert.equal(invalid.status, 422);
      // JSON names the fields; XML carries Rails' full messages (docs/api.md#errors).
      assert.deepEqual(invalid.errors, format === 'json'
        ? { email: ['is invalid'], login: ['has already been taken'], password: ['is too short (minimum is 8 characters)'] }
        : { base: ['Email is invalid', 'Login has already been taken', 'Password is too short (minimum is 8 characters)'] });

      // Ten wrong passwords lock the login out (docs/security.md#brute-force); no retry is made for a 429 that asks for minutes.
      const locked = new CmiClient({ baseUrl, login: `nobody-${format}`, password: 'wrong', format, maxRetries: 2 });
      for (let i = 0; i < 10; i++) await assert.rejects(locked.version(), CmiAuthenticationError);
      const limited = await locked.version().catch((error: unknown) => error);
      assert.ok(limited instanceof CmiRateLimitError);
      assert.equal(limited.status, 429);
      assert.ok(limited.retryAfter !== undefined && limited.retryAfter > 30, `Retry-After ${limited.retryAfter}`);
    });

    it('keeps the session cookie after the first call, and logs in again with the credentials when the session ends', async () => {
      const client = new CmiClient({ baseUrl, login: ALICE.login, password: ALICE.password, format });
      assert.equal(client.session.active, false);
      await client.version();
      assert.equal(client.session.active, true);
      // The cookie alone: the server no longer needs the password, as a wrong one shows.
      const seen: string[] = [];
      const spying = new CmiClient({
        baseUrl, login: ALICE.login, password: ALICE.password, format,
        fetch: (input, init) => {
          const headers = new Headers(init?.headers);
          seen.push(`${headers.has('authorization') ? 'basic' : ''}${headers.has('cookie') ? 'cookie' : ''}`);
          return fetch(input, init);
        },
      });
      await spying.version();
      await spying.version();
      await spying.session.logout();
      assert.equal(spying.session.active, false);
      await spying.version();
      assert.deepEqual(seen, ['basic', 'cookie', 'cookie', 'basic']);
      // A session ended elsewhere (the cookie refused): once more with the credentials, transparently.
      const first = new CmiClient({ baseUrl, login: ALICE.login, password: ALICE.password, format });
      await first.version();
      await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: { user: { password: ALICE.password } } });
      t.time.advance(1000);
      assert.equal(await first.version(), '6.7');
      assert.equal(first.session.active, true);
    });

    it('infrastructure errors: record, get, list with filters, all, occurrences, histogram, breakdown, report, delete, deleteMatching', async () => {
      const tracker = admin.infrastructureErrors;
      const a = await tracker.record({ error_class: `Timeout${format}`, message: 'attach timed out', host: 'hv-01', component: 'storage', request_id: 'r-1', context: { vm_id: 1042 } });
      assert.equal(a.created, true);
      assert.deepEqual([a.error.counter, a.error.reported, a.error.message, a.error.backtrace], [1, false, 'attach timed out', '']);
      const again = await tracker.record({ error_class: `Timeout${format}`, message: 'attach timed out', host: 'hv-02', count: 3 });
      assert.deepEqual([again.created, again.error.id, again.error.counter], [false, a.error.id, 4]);
      const b = await tracker.record({ error_class: `Other${format}`, message: 'x', backtrace: ['f.ts:1', 'g.ts:2'] });
      assert.equal(b.error.backtrace, 'f.ts:1\ng.ts:2');

      assert.deepEqual(await tracker.get(a.error.id), again.error);
      const filtered = await tracker.list({ error_class: `Timeout${format}`, host: 'hv-01' });
      assert.deepEqual([filtered.items.map((e) => e.id), filtered.total], [[a.error.id], 1]);
      const walked: number[] = [];
      for await (const error of tracker.all({ perPage: 1, sort: 'created_at', direction: 'asc', q: format })) walked.push(error.id);
      assert.deepEqual(walked, [a.error.id, b.error.id]);
      await assert.rejects(tracker.list({ sort: 'name' as never }), (error: unknown) => error instanceof CmiValidationError && (format === 'xml' || 'sort' in error.errors));

      const occurrences = await tracker.occurrences(a.error.id);
      assert.equal(occurrences.total, 2);
      const first = occurrences.items.find((o) => o.host === 'hv-01');
      const at = a.error.created_at;
      assert.deepEqual(first && { ...first, id: 0 }, { id: 0, occurred_at: at, host: 'hv-01', component: 'storage', request_id: 'r-1', message: 'attach timed out', context: { vm_id: 1042 } });
      const histogram = await tracker.histogram(a.error.id, { period: '24h' });
      assert.equal(histogram.length, 24);
      assert.deepEqual(histogram.at(-1), { start: new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000), count: 4 });
      const breakdown = await tracker.breakdown(a.error.id, { by: 'host' });
      assert.deepEqual([breakdown.items, breakdown.total], [[{ value: 'hv-02', count: 3 }, { value: 'hv-01', count: 1 }], 2]);

      assert.equal((await tracker.report(b.error.id)).reported, true);
      await tracker.delete(b.error.id);
      await assert.rejects(tracker.get(b.error.id), CmiNotFoundError);
      assert.equal(await tracker.deleteMatching({ error_class: `Timeout${format}` }), 1);
      assert.equal((await tracker.list({ q: format })).total, 0);
    });

    it('userGroups: create, get, list, update, users of a group, delete; users.list with filters', async () => {
      const made = await admin.userGroups.create({ label: `Staff ${format}`, role_ids: [2] });
      assert.deepEqual({ ...made, roles: made.roles.map((role) => role.identifier) }, {
        id: made.id, label: `Staff ${format}`, identifier: `staff_${format}`, roles: ['user'], bucket_id: null, additional_fields: {}, created_at: made.created_at, updated_at: made.updated_at,
        assign_vcloud_roles: null, billing_plans: null, closed: null, company_billing_plan_id: null, datacenter_id: null, draas_id: null,
        federation_enabled: null, federation_id: null, hypervisor_id: null, preconfigured_only: null, provider_vdc_id: null, traded: null, user_buckets: null,
      });
      assert.ok(made.created_at instanceof Date && made.created_at.getTime() >= START.getTime(), String(made.created_at));
      assert.deepEqual(await admin.userGroups.get(made.id), made);
      const page = await admin.userGroups.list({ perPage: 1 });
      assert.deepEqual([page.items.length, page.total, page.limit], [1, 1, 1]);
      await admin.userGroups.update(made.id, { label: 'Renamed', role_ids: [] });
      assert.deepEqual([(await admin.userGroups.get(made.id)).label, (await admin.userGroups.get(made.id)).roles], ['Renamed', []]);
      await admin.users.update(t.alice.id, { user_group_id: made.id });
      const members = await admin.userGroups.users(made.id, { q: 'ALI' });
      assert.deepEqual([members.total, members.items.map((user) => [user.login, user.user_group_id])], [1, [['alice', made.id]]]);
      const filtered = await admin.users.list({ user_group_id: made.id, status: 'active', role_id: 2 });
      assert.deepEqual([filtered.total, filtered.items.map((user) => user.login)], [1, ['alice']]);
      const walked: string[] = [];
      for await (const user of admin.users.all({ q: 'example.com', perPage: 1 })) walked.push(user.login);
      assert.ok(walked.includes('alice') && walked.includes('admin'), walked.join());
      await assert.rejects(admin.users.list({ status: 'gone' as 'active' }), (error: unknown) => error instanceof CmiValidationError && error.message.includes('must be one of active, suspended, deleted'));
      await assert.rejects(admin.userGroups.delete(made.id), (error: unknown) => error instanceof CmiValidationError);
      await admin.users.update(t.alice.id, { user_group_id: null });
      await admin.userGroups.delete(made.id);
      await assert.rejects(admin.userGroups.get(made.id), CmiNotFoundError);
    });

    it('deliveries.list: typed, empty here', async () => {
      assert.deepEqual(await admin.deliveries.list(), { items: [], total: 0, page: 1, limit: 25, hasMore: false });
    });
  });
}

describe('CmiClient pagination: all() walks every page once', () => {
  let t: TestApp;
  let admin: CmiClient;
  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    admin = new CmiClient({ baseUrl: `http://127.0.0.1:${await listenLocally(t.app)}`, login: ADMIN.login, password: ADMIN.password });
  });
  after(() => t.close());

  const logins = async (iterable: AsyncIterable<{ login: string }>) => {
    const out: string[] = [];
    for await (const item of iterable) out.push(item.login);
    return out;
  };

  it('an empty list yields nothing (one request)', async () => {
    let requests = 0;
    const counting = new CmiClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`, login: ADMIN.login, password: ADMIN.password, fetch: (i, o) => (requests++, fetch(i, o)) });
    const walked: number[] = [];
    for await (const error of counting.infrastructureErrors.all()) walked.push(error.id);
    assert.deepEqual([walked, requests], [[], 1]);
  });

  it('a total that divides evenly: 4 users, 2 a page, two pages and no third request', async () => {
    await t.addUsers(2);
    let requests = 0;
    const counting = new CmiClient({ baseUrl: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`, login: ADMIN.login, password: ADMIN.password, fetch: (i, o) => (requests++, fetch(i, o)) });
    assert.deepEqual(await logins(counting.users.all({ perPage: 2 })), ['admin', 'alice', 'user001', 'user002']);
    assert.equal(requests, 2);
  });

  it('a record added mid-walk is reached; one removed before the walk\'s place skips nobody', async () => {
    const seen: string[] = [];
    let changed = false;
    for await (const user of admin.users.all({ perPage: 2 })) {
      seen.push(user.login);
      if (user.login === 'alice' && !changed) {
        changed = true;
        // After page 1 (admin, alice): zed added at the end, user001 removed, so user002 shifts onto page 1.
        await admin.users.create({ login: 'zed', email: 'zed@example.com', password: 'zed-password' });
        const [gone] = (await admin.users.list()).items.filter((u) => u.login === 'user001');
        await admin.users.delete(gone!.id);
        await admin.users.delete(gone!.id);
      }
    }
    // user001 was deleted after page 1 but before page 2 was read: not listed; user002 and zed are.
    assert.deepEqual(seen, ['admin', 'alice', 'user002', 'zed']);
  });

  it('a server that lies (X-Page always 1, an X-Total or Link that never ends, the same page each time) cannot hold the walk', async () => {
    const port = (t.app.server.address() as { port: number }).port;
    for (const lie of ['x-total', 'link'] as const) {
      let requests = 0;
      const liar = new CmiClient({
        baseUrl: `http://127.0.0.1:${port}`,
        login: ADMIN.login,
        password: ADMIN.password,
        // The real first page, whatever page was asked for, with headers announcing more forever.
        fetch: async (input, init) => {
          requests++;
          const url = new URL(input instanceof Request ? input.url : input);
          url.searchParams.set('page', '1');
          const real = await fetch(url, init);
          const headers = new Headers(real.headers);
          headers.set('x-page', '1');
          if (lie === 'x-total') headers.set('x-total', '1000000');
          else {
            headers.delete('x-total');
            headers.set('link', `<${url.href}>; rel="next"`);
          }
          return new Response(await real.arrayBuffer(), { status: real.status, headers });
        },
      });
      assert.deepEqual(await logins(liar.users.all({ perPage: 2 })), ['admin', 'alice'], lie);
      assert.equal(requests, 2, lie);
    }
  });

  it('users.delete is never retried: a 502 after the server marked the user deleted leaves the record there', async () => {
    const ghost = await admin.users.create({ login: 'ghost', email: 'ghost@example.com', password: 'ghost-password' });
    let deletes = 0;
    const behindProxy = new CmiClient({
      baseUrl: `http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`,
      login: ADMIN.login,
      password: ADMIN.password,
      initialRetryDelay: 1,
      // A proxy that passes the request on, then loses the answer: the server acted, the client sees 502.
      fetch: async (input, init) => {
        const real = await fetch(input, init);
        if (init?.method !== 'DELETE') return real;
        deletes++;
        await real.arrayBuffer();
        return new Response('{}', { status: 502, headers: { 'content-type': 'application/json' } });
      },
    });
    await assert.rejects(behindProxy.users.delete(ghost.id, { maxRetries: 2 }), CmiServerError);
    assert.equal(deletes, 1);
    assert.equal((await admin.users.get(ghost.id)).status, 'deleted');
    await admin.users.delete(ghost.id);
  });

  it('a record added before the walk\'s place (shifting the rest along) is not yielded twice', async () => {
    const seen: number[] = [];
    let added = false;
    for await (const user of admin.users.all({ perPage: 1 })) {
      seen.push(user.id);
      if (!added) {
        added = true;
        await t.addUsers(1);
      }
    }
    assert.equal(new Set(seen).size, seen.length);
    assert.equal(seen.length, (await admin.users.list()).total);
  });
});
