import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { authenticator } from 'otplib';
import { ROUTES } from '../src/app/api-routes.js';
import { auditTrailOn } from '../src/audit/audit-trail.js';
import { loadConfig } from '../src/config.js';
import { userCommands } from '../src/cli/local/users.js';
import { deliveryCommands } from '../src/cli/local/deliveries.js';
import { errorCommands } from '../src/cli/local/errors.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AuditEvent, CmiClient, CmiPermissionError, CmiValidationError } from '../src/client/index.js';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { ERRORS, recordOf, report } from './support/error-reports.js';
import { tokenOf, withCookie } from './support/http.js';

// The audit trail (docs/api.md#audit-log, docs/security.md#the-audit-trail), on SQLite and, with
// DATABASE_URL, on PostgreSQL.

const AUDIT = '/sysadmin_tools/audit_log';
const JSON_BODY = { 'content-type': 'application/json' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

type Row = { id: number; at: string; actor_id: number | null; actor_login: string; credential: string; address: string | null; request_id: string | null; action: string; target_type: string; target_id: number | null; changes: string };

const rows = async (t: TestApp): Promise<Row[]> =>
  (await t.database.db.selectFrom('audit_events').selectAll().orderBy('id').execute()).map((row) => ({
    ...row, id: Number(row.id), actor_id: row.actor_id === null ? null : Number(row.actor_id), target_id: row.target_id === null ? null : Number(row.target_id),
  }));

const fault = (n: number) => ({ error_class: 'RangeError', message: `pool exhausted ${n}`, backtrace: `src/pool.ts:${n}:in 'allocate'` });

async function consoleSession(t: TestApp, login = ADMIN.login, password = ADMIN.password, requestId = 'console-sign-in'): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/console/sign-in', headers: { ...FORM, 'x-request-id': requestId }, payload: new URLSearchParams({ login, password }).toString() });
  assert.equal(res.statusCode, 303, res.body);
  return `_cmi_console=${/^_cmi_console=([^;\s]+);/.exec(String(res.headers['set-cookie']))![1]}`;
}

const csrfOf = (body: string): string => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;

/** A sample request of a mutating route: what it sends, and the action its audit row names. */
interface Sample {
  route: string;
  action: string;
  send: () => Promise<{ method: string; url: string; headers?: Record<string, string>; payload?: string }>;
}

/**
 * The routes that change nothing an audit row should say (docs/security.md#what-is-audited), each with
 * its reason: a new route must be given a sample below or a place here, or the walk fails.
 */
const EXEMPT: Readonly<Record<string, string>> = {
  'POST /sysadmin_tools/infrastructure/errors': 'a report of an occurrence: counted in the error\'s counter and activity, never one audit row a report (ingestion speed)',
  'POST /api/:id/envelope/': 'Sentry ingestion: occurrences, counted as reports are',
  'POST /api/:id/store/': 'Sentry ingestion: occurrences, counted as reports are',
  'OPTIONS /api/:id/envelope/': 'a CORS preflight: changes nothing',
  'OPTIONS /api/:id/store/': 'a CORS preflight: changes nothing',
  'POST /v1/logs': 'OpenTelemetry ingestion: occurrences, counted as reports are',
  'POST /v1/traces': 'OpenTelemetry ingestion: occurrences, counted as reports are',
  'POST /api/:key_id/journal/:public_key/upload': 'journal ingestion: occurrences, counted as reports are',
  'POST /users/validate_login': 'a question (is this login or email free?): changes nothing',
  'POST /users/sign_in': 'a sign-in, audited as session.create like the console\'s form; a form from an allowed origin: test/sign-in-form.test.ts',
  'POST /users/:id/unlock_account': 'audited as user.unlock, but its success needs the token a lock\'s mail carries: test/unlock-account.test.ts checks its row',
};

describe('the audit trail', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('writes a row for the successful request of every mutating route of the route table, naming its request id (the walk)', async () => {
    const state: Record<string, number> = {};
    const admin = (method: string, url: string, body?: unknown) => () => Promise.resolve({
      method, url, headers: { authorization: t.adminAuth, ...JSON_BODY }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const idOf = (res: LightMyRequestResponse, root: string) => (JSON.parse(res.body) as Record<string, { id: number }>)[root]!.id;
    const errorIds: number[] = [];
    for (const n of [1, 2, 3, 4]) errorIds.push(recordOf(await report(t, fault(n))).id);
    const [e1, e2, e3, e4] = errorIds as [number, number, number, number];

    const samples: Sample[] = [
      { route: 'POST /users', action: 'user.create', send: admin('POST', '/users.json', { user: { login: 'walker', email: 'walker@example.com', password: 'walker-password-1' } }) },
      { route: 'PUT /users/:id', action: 'user.update', send: async () => (await admin('PUT', `/users/${state.user}.json`, { user: { first_name: 'Walt' } })()) },
      { route: 'POST /users/:id/suspend', action: 'user.suspend', send: async () => (await admin('POST', `/users/${state.user}/suspend.json`)()) },
      { route: 'POST /users/:id/activate', action: 'user.activate', send: async () => (await admin('POST', `/users/${state.user}/activate.json`)()) },
      { route: 'POST /users/:id/make_new_api_key', action: 'user.api_key.create', send: async () => (await admin('POST', `/users/${state.user}/make_new_api_key.json`)()) },
      { route: 'POST /users/:id/user_api_keys', action: 'user.api_key.create', send: async () => (await admin('POST', `/users/${state.user}/user_api_keys.json`, { user_api_key: { description: 'walk' } })()) },
      { route: 'POST /users/:id/user_api_keys/generate', action: 'user.api_key.create', send: async () => (await admin('POST', `/users/${state.user}/user_api_keys/generate.json`)()) },
      { route: 'DELETE /users/:id/user_api_keys/:key_id', action: 'user.api_key.revoke', send: async () => (await admin('DELETE', `/users/${state.user}/user_api_keys/${state.key}.json`)()) },
      { route: 'POST /users/:id/user_white_lists', action: 'user.white_list.create', send: async () => (await admin('POST', `/users/${state.user}/user_white_lists.json`, { user_white_list: { ip: '192.0.2.0/24', description: 'walk' } })()) },
      { route: 'PUT /users/:id/user_white_lists/:white_list_id', action: 'user.white_list.update', send: async () => (await admin('PUT', `/users/${state.user}/user_white_lists/${state.whiteList}.json`, { user_white_list: { description: 'walked' } })()) },
      { route: 'DELETE /users/:id/user_white_lists/:white_list_id', action: 'user.white_list.delete', send: async () => (await admin('DELETE', `/users/${state.user}/user_white_lists/${state.whiteList}.json`)()) },
      { route: 'DELETE /users/:id/sessions', action: 'user.sessions.delete', send: async () => (await admin('DELETE', `/users/${state.user}/sessions.json`)()) },
      { route: 'DELETE /users/drop_all', action: 'user.sessions.delete_all', send: admin('DELETE', '/users/drop_all.json') },
      { route: 'DELETE /users/:id', action: 'user.delete', send: async () => (await admin('DELETE', `/users/${state.user}.json`)()) },
      { route: 'PUT /settings/password_policy', action: 'password_policy.update', send: admin('PUT', '/settings/password_policy.json', { password_policy: { history: 2 } }) },
      { route: 'POST /roles', action: 'role.create', send: admin('POST', '/roles.json', { role: { label: 'Walkers', permission_ids: [1] } }) },
      { route: 'PUT /roles/:id', action: 'role.update', send: async () => (await admin('PUT', `/roles/${state.role}.json`, { role: { label: 'Walkers 2' } })()) },
      { route: 'POST /roles/:id/clone', action: 'role.clone', send: async () => (await admin('POST', `/roles/${state.role}/clone.json`)()) },
      { route: 'DELETE /roles/:id', action: 'role.delete', send: async () => (await admin('DELETE', `/roles/${state.role}.json`)()) },
      { route: 'POST /billing/buckets', action: 'bucket.create', send: admin('POST', '/billing/buckets.json', { bucket: { label: 'Walk bucket' } }) },
      { route: 'PUT /billing/buckets/:id', action: 'bucket.update', send: async () => (await admin('PUT', `/billing/buckets/${state.bucket}.json`, { bucket: { label: 'Walk bucket 2' } })()) },
      { route: 'DELETE /billing/buckets/:id', action: 'bucket.delete', send: async () => (await admin('DELETE', `/billing/buckets/${state.bucket}.json`)()) },
      { route: 'POST /user_groups', action: 'user_group.create', send: admin('POST', '/user_groups.json', { user_group: { label: 'Walk group' } }) },
      { route: 'PUT /user_groups/:id', action: 'user_group.update', send: async () => (await admin('PUT', `/user_groups/${state.group}.json`, { user_group: { label: 'Walk group 2' } })()) },
      { route: 'DELETE /user_groups/:id', action: 'user_group.delete', send: async () => (await admin('DELETE', `/user_groups/${state.group}.json`)()) },
      { route: 'PUT /sysadmin_tools/infrastructure/errors/:id/triage', action: 'infrastructure_error.triage', send: admin('PUT', `${ERRORS}/${e1}/triage.json`, { triage: { status: 'resolved' } }) },
      { route: 'PUT /sysadmin_tools/infrastructure/errors/triage', action: 'infrastructure_error.triage_many', send: admin('PUT', `${ERRORS}/triage.json`, { triage: { status: 'ignored' }, ids: [e2, e3] }) },
      { route: 'POST /sysadmin_tools/infrastructure/changes', action: 'change.create', send: admin('POST', '/sysadmin_tools/infrastructure/changes.json', { change: { kind: 'deploy', title: 'Walk change' } }) },
      { route: 'PUT /sysadmin_tools/infrastructure/changes/:id', action: 'change.update', send: async () => (await admin('PUT', `/sysadmin_tools/infrastructure/changes/${state.change}.json`, { change: { title: 'Walk change 2' } })()) },
      { route: 'DELETE /sysadmin_tools/infrastructure/changes/:id', action: 'change.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/infrastructure/changes/${state.change}.json`)()) },
      { route: 'POST /sysadmin_tools/infrastructure/saved_searches', action: 'saved_search.create', send: admin('POST', '/sysadmin_tools/infrastructure/saved_searches.json', { saved_search: { name: 'Walk search', query: 'host:hv-01' } }) },
      { route: 'PUT /sysadmin_tools/infrastructure/saved_searches/:id', action: 'saved_search.update', send: async () => (await admin('PUT', `/sysadmin_tools/infrastructure/saved_searches/${state.search}.json`, { saved_search: { shared: true } })()) },
      { route: 'DELETE /sysadmin_tools/infrastructure/saved_searches/:id', action: 'saved_search.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/infrastructure/saved_searches/${state.search}.json`)()) },
      { route: 'POST /sysadmin_tools/infrastructure/releases', action: 'release.declare', send: admin('POST', '/sysadmin_tools/infrastructure/releases.json', { release: { name: '6.8.0' } }) },
      { route: 'POST /sysadmin_tools/infrastructure/errors/:id/notes', action: 'infrastructure_error.note.create', send: admin('POST', `${ERRORS}/${e1}/notes.json`, { note: { body: 'looked at it' } }) },
      { route: 'DELETE /sysadmin_tools/infrastructure/errors/:id/notes/:note_id', action: 'infrastructure_error.note.delete', send: async () => (await admin('DELETE', `${ERRORS}/${e1}/notes/${state.note}.json`)()) },
      { route: 'POST /sysadmin_tools/infrastructure/errors/:id/report', action: 'infrastructure_error.report', send: admin('POST', `${ERRORS}/${e1}/report.json`) },
      { route: 'DELETE /sysadmin_tools/infrastructure/errors/:id', action: 'infrastructure_error.delete', send: admin('DELETE', `${ERRORS}/${e4}.json`) },
      { route: 'DELETE /sysadmin_tools/infrastructure/errors', action: 'infrastructure_error.delete_many', send: admin('DELETE', `${ERRORS}.json?error_class=RangeError`) },
      { route: 'POST /sysadmin_tools/infrastructure/ingest_keys', action: 'ingest_key.create', send: admin('POST', '/sysadmin_tools/infrastructure/ingest_keys.json', { ingest_key: { label: 'Walk key' } }) },
      { route: 'PUT /sysadmin_tools/infrastructure/ingest_keys/:id', action: 'ingest_key.update', send: async () => (await admin('PUT', `/sysadmin_tools/infrastructure/ingest_keys/${state.ingest}.json`, { ingest_key: { enabled: false } })()) },
      { route: 'DELETE /sysadmin_tools/infrastructure/ingest_keys/:id', action: 'ingest_key.revoke', send: async () => (await admin('DELETE', `/sysadmin_tools/infrastructure/ingest_keys/${state.ingest}.json`)()) },
      { route: 'POST /sysadmin_tools/infrastructure/log_rules', action: 'log_rule.create', send: admin('POST', '/sysadmin_tools/infrastructure/log_rules.json', { log_rule: { label: 'Walk rule', pattern: '*walk*', error_class: 'walk' } }) },
      { route: 'PUT /sysadmin_tools/infrastructure/log_rules/:id', action: 'log_rule.update', send: async () => (await admin('PUT', `/sysadmin_tools/infrastructure/log_rules/${state.logRule}.json`, { log_rule: { enabled: false } })()) },
      { route: 'DELETE /sysadmin_tools/infrastructure/log_rules/:id', action: 'log_rule.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/infrastructure/log_rules/${state.logRule}.json`)()) },
      { route: 'POST /sysadmin_tools/identity_providers', action: 'identity_provider.create', send: admin('POST', '/sysadmin_tools/identity_providers.json', { identity_provider: { kind: 'oidc', label: 'Walk SSO', settings: { issuer: 'https://sso.example.com', client_id: 'walk', client_secret: 'walk-secret' } } }) },
      { route: 'PUT /sysadmin_tools/identity_providers/:id', action: 'identity_provider.update', send: async () => (await admin('PUT', `/sysadmin_tools/identity_providers/${state.identityProvider}.json`, { identity_provider: { enabled: false } })()) },
      { route: 'DELETE /sysadmin_tools/identity_providers/:id', action: 'identity_provider.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/identity_providers/${state.identityProvider}.json`)()) },
      { route: 'POST /sysadmin_tools/alert_destinations', action: 'alert_destination.create', send: admin('POST', '/sysadmin_tools/alert_destinations.json', { alert_destination: { label: 'Walk hook', kind: 'webhook', url: 'http://127.0.0.1:8/walk-hook-path', secret: 'walk-hook-secret-1' } }) },
      { route: 'PUT /sysadmin_tools/alert_destinations/:id', action: 'alert_destination.update', send: async () => (await admin('PUT', `/sysadmin_tools/alert_destinations/${state.destination}.json`, { alert_destination: { label: 'Walk hook 2', secret: 'walk-hook-secret-2' } })()) },
      { route: 'POST /sysadmin_tools/alert_destinations/:id/test', action: 'alert_destination.test', send: async () => (await admin('POST', `/sysadmin_tools/alert_destinations/${state.destination}/test.json`)()) },
      { route: 'POST /sysadmin_tools/alert_rules', action: 'alert_rule.create', send: async () => (await admin('POST', '/sysadmin_tools/alert_rules.json', { alert_rule: { label: 'Walk rule', events: ['new'], destination_ids: [state.destination] } })()) },
      { route: 'PUT /sysadmin_tools/alert_rules/:id', action: 'alert_rule.update', send: async () => (await admin('PUT', `/sysadmin_tools/alert_rules/${state.rule}.json`, { alert_rule: { component: 'storage' } })()) },
      { route: 'DELETE /sysadmin_tools/alert_rules/:id', action: 'alert_rule.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/alert_rules/${state.rule}.json`)()) },
      { route: 'DELETE /sysadmin_tools/alert_destinations/:id', action: 'alert_destination.delete', send: async () => (await admin('DELETE', `/sysadmin_tools/alert_destinations/${state.destination}.json`)()) },
      // Alice's own second factor (only the user itself enrols and confirms), removed by the administrator.
      { route: 'POST /users/:id/two_factor', action: 'user.two_factor.create', send: () => Promise.resolve({ method: 'POST', url: '/users/2/two_factor.json', headers: { authorization: t.aliceAuth } }) },
      {
        route: 'PUT /users/:id/two_factor', action: 'user.two_factor.confirm', send: async () => {
          const secret = (await t.database.db.selectFrom('user_two_factor').select('secret').where('user_id', '=', 2).executeTakeFirstOrThrow()).secret;
          const code = authenticator.clone({ epoch: t.time.clock().getTime() }).generate(secret);
          return { method: 'PUT', url: '/users/2/two_factor.json', headers: { authorization: t.aliceAuth, ...JSON_BODY }, payload: JSON.stringify({ two_factor: { code } }) };
        },
      },
      { route: 'DELETE /users/:id/two_factor', action: 'user.two_factor.delete', send: admin('DELETE', '/users/2/two_factor.json') },
      { route: 'POST /users/:id/yubi_keys', action: 'user.yubi_key.create', send: admin('POST', '/users/2/yubi_keys.json', { yubi_key: { label: 'walk', otp: 'cccjgjgkhcbbirdrfdnlnghhfgrtnnlgedjlftrbdeut' } }) },
      { route: 'DELETE /users/:id/yubi_keys/:key_id', action: 'user.yubi_key.delete', send: async () => (await admin('DELETE', `/users/2/yubi_keys/${state.yubiKey}.json`)()) },
      {
        route: 'DELETE /session', action: 'session.delete', send: async () => {
          const signedIn = await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: t.aliceAuth } });
          return { method: 'DELETE', url: '/session.json', headers: withCookie(tokenOf(signedIn)) };
        },
      },
    ];

    // Every mutating route has a sample or a reason, and nothing else does.
    const mutating = ROUTES.filter((route) => route.method !== 'GET').map((route) => `${route.method} ${route.path}`).sort();
    const covered = [...samples.map((sample) => sample.route), ...Object.keys(EXEMPT)].sort();
    assert.deepEqual([...new Set(covered)], mutating, 'every mutating route of the table has a sample in this walk, or a reason in EXEMPT');

    for (const [n, sample] of samples.entries()) {
      const { method, url, headers = {}, payload } = await sample.send();
      const requestId = `walk-${n}`;
      const res = await t.app.inject({ method: method as 'GET', url, headers: { ...headers, 'x-request-id': requestId }, ...(payload === undefined ? {} : { payload }) });
      assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${sample.route}: ${res.statusCode} ${res.body}`);
      if (sample.route === 'POST /users') state.user = idOf(res, 'user');
      if (sample.route === 'POST /users/:id/user_api_keys') state.key = idOf(res, 'user_api_key');
      if (sample.route === 'POST /roles') state.role = idOf(res, 'role');
      if (sample.route === 'POST /users/:id/yubi_keys') state.yubiKey = idOf(res, 'yubi_key');
      if (sample.route === 'POST /users/:id/user_white_lists') state.whiteList = idOf(res, 'user_white_list');
      if (sample.route === 'POST /billing/buckets') state.bucket = idOf(res, 'bucket');
      if (sample.route === 'POST /sysadmin_tools/infrastructure/changes') state.change = idOf(res, 'change');
      if (sample.route === 'POST /sysadmin_tools/infrastructure/saved_searches') state.search = idOf(res, 'saved_search');
      if (sample.route === 'POST /user_groups') state.group = idOf(res, 'user_group');
      if (sample.route === 'POST /sysadmin_tools/infrastructure/errors/:id/notes') state.note = idOf(res, 'note');
      if (sample.route === 'POST /sysadmin_tools/infrastructure/ingest_keys') state.ingest = idOf(res, 'ingest_key');
      if (sample.route === 'POST /sysadmin_tools/infrastructure/log_rules') state.logRule = idOf(res, 'log_rule');
      if (sample.route === 'POST /sysadmin_tools/identity_providers') state.identityProvider = idOf(res, 'identity_provider');
      if (sample.route === 'POST /sysadmin_tools/alert_destinations') state.destination = idOf(res, 'alert_destination');
      if (sample.route === 'POST /sysadmin_tools/alert_rules') state.rule = idOf(res, 'alert_rule');
      const written = (await rows(t)).filter((row) => row.request_id === requestId);
      assert.deepEqual(written.map((row) => row.action), [sample.action], `${sample.route} wrote one audit row, ${sample.action}`);
    }

    // A destination's secret and its URL's path (a Slack URL's secret) are never in the trail; a change of
    // the secret is recorded as made.
    const destinationRows = (await rows(t)).filter((row) => row.target_type === 'alert_destination');
    assert.deepEqual(destinationRows.map((row) => row.action).sort(), ['alert_destination.create', 'alert_destination.delete', 'alert_destination.test', 'alert_destination.update']);
    for (const row of destinationRows) assert.doesNotMatch(JSON.stringify(row), /walk-hook-secret|walk-hook-path/);
    assert.deepEqual(JSON.parse(destinationRows.find((row) => row.action === 'alert_destination.create')!.changes), {
      label: 'Walk hook', kind: 'webhook', url: 'http://127.0.0.1:8/…', secret: '[redacted]', smtp_host: null, smtp_port: null, smtp_security: null,
      smtp_user: null, smtp_password: '[redacted]', from: null, to: [], enabled: true,
    });
    assert.deepEqual(JSON.parse(destinationRows.find((row) => row.action === 'alert_destination.update')!.changes), { label: ['Walk hook', 'Walk hook 2'], secret: '[redacted]' });

    // The exempt ingestion writes none.
    const before = (await rows(t)).length;
    assert.equal((await report(t, fault(9))).statusCode, 201);
    assert.equal((await rows(t)).length, before);
  });

  it('records who, how, from where and what changed: password, API key, session cookie, console session, the local commands', async () => {
    const from = (await rows(t)).length;
    // Basic with a password.
    const put = await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, ...JSON_BODY, 'x-request-id': 'who-1' }, payload: '{"user":{"first_name":"Alicia","locale":"fr"}}' });
    assert.equal(put.statusCode, 204);
    // Basic with an API key.
    const made = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/make_new_api_key.json`, headers: { authorization: t.aliceAuth, 'x-request-id': 'who-2' } });
    const apiKey = (JSON.parse(made.body) as { user: { api_key: string } }).user.api_key;
    const byKey = await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.basic(ALICE.login, apiKey), ...JSON_BODY, 'x-request-id': 'who-3' }, payload: '{"last_name":"Key"}' });
    assert.equal(byKey.statusCode, 204);
    // The API's session cookie.
    const token = tokenOf(await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: t.aliceAuth } }));
    const byCookie = await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { ...withCookie(token), ...JSON_BODY, 'x-request-id': 'who-4' }, payload: '{"last_name":"Cookie"}' });
    assert.equal(byCookie.statusCode, 204);
    // The console: its sign-in, then a change through a form.
    const cookie = await consoleSession(t, ADMIN.login, ADMIN.password, 'who-5');
    const page = await t.app.inject({ method: 'GET', url: '/console/buckets/new', headers: { cookie } });
    const created = await t.app.inject({ method: 'POST', url: '/console/buckets', headers: { ...FORM, cookie, 'x-request-id': 'who-6' }, payload: new URLSearchParams({ _csrf: csrfOf(page.body), label: 'Console bucket', currency_code: 'EUR', monthly_price: '2' }).toString() });
    assert.equal(created.statusCode, 303, created.body);
    // The operator's local command.
    await userCommands(t.database).suspend(ALICE.login);
    await userCommands(t.database).unlock(ALICE.login);

    // The app's rows at its (test) clock's time; the local commands' at the system clock's.
    const now = t.time.clock().toISOString();
    const written = (await rows(t)).slice(from).map((row) => ({
      actor_id: row.actor_id, actor_login: row.actor_login, credential: row.credential, address: row.address, request_id: row.request_id,
      action: row.action, target_type: row.target_type, target_id: row.target_id, changes: row.changes, at_is_now: row.at === now,
    }));
    const bucketId = written.find((row) => row.action === 'bucket.create')!.target_id;
    const address = '127.0.0.1';
    assert.deepEqual(written, [
      { actor_id: t.admin.id, actor_login: 'admin', credential: 'password', address, request_id: 'who-1', action: 'user.update', target_type: 'user', target_id: t.alice.id, changes: '{"first_name":["Alice","Alicia"],"locale":[null,"fr"]}', at_is_now: true },
      { actor_id: t.alice.id, actor_login: 'alice', credential: 'password', address, request_id: 'who-2', action: 'user.api_key.create', target_type: 'user', target_id: t.alice.id, changes: '{"api_key":"[redacted]","default":true}', at_is_now: true },
      { actor_id: t.alice.id, actor_login: 'alice', credential: 'api_key', address, request_id: 'who-3', action: 'user.update', target_type: 'user', target_id: t.alice.id, changes: '{"last_name":["User","Key"]}', at_is_now: true },
      { actor_id: t.alice.id, actor_login: 'alice', credential: 'session', address, request_id: 'who-4', action: 'user.update', target_type: 'user', target_id: t.alice.id, changes: '{"last_name":["Key","Cookie"]}', at_is_now: true },
      { actor_id: t.admin.id, actor_login: 'admin', credential: 'password', address, request_id: 'who-5', action: 'session.create', target_type: 'user', target_id: t.admin.id, changes: '{}', at_is_now: true },
      { actor_id: t.admin.id, actor_login: 'admin', credential: 'session', address, request_id: 'who-6', action: 'bucket.create', target_type: 'bucket', target_id: bucketId, changes: '{"label":"Console bucket","currency_code":"EUR","monthly_price":2,"show_price":false,"allows_kms":false,"allows_mak":false,"allows_own":false}', at_is_now: true },
      { actor_id: null, actor_login: 'system', credential: 'local', address: null, request_id: null, action: 'user.suspend', target_type: 'user', target_id: t.alice.id, changes: '{"status":["active","suspended"]}', at_is_now: false },
      { actor_id: null, actor_login: 'system', credential: 'local', address: null, request_id: null, action: 'user.unlock', target_type: 'user', target_id: t.alice.id, changes: '{}', at_is_now: false },
    ]);
    await userCommands(t.database).activate(ALICE.login);

    // cmi local deliveries retry, the one change of the outbox.
    const at = t.time.clock().toISOString();
    const { id } = await t.database.db.insertInto('webhook_deliveries').values({
      delivery_id: 'd-1', kind: 'new', error_id: 7, url: 'http://127.0.0.1:8/hook', body: '{}', state: 'failed', attempts: 3, last_status: 500,
      created_at: at, next_attempt_at: at, delivered_at: null, lease_owner: null, lease_until: null,
    }).returning('id').executeTakeFirstOrThrow();
    await deliveryCommands(t.database, t.config).retry(String(id));
    const retried = (await rows(t)).at(-1)!;
    assert.deepEqual([retried.actor_login, retried.credential, retried.action, retried.target_type, retried.target_id, retried.changes],
      ['system', 'local', 'webhook_delivery.retry', 'webhook_delivery', Number(id), '{"kind":"new","error_id":7}']);
  });

  it('never stores a secret: passwords, their hashes, API keys, session tokens, ingest keys', async () => {
    const password = 'secret-password-of-bob-1';
    const created = await t.app.inject({ method: 'POST', url: '/users.json', headers: { authorization: t.adminAuth, ...JSON_BODY }, payload: JSON.stringify({ user: { login: 'bob', email: 'bob@example.com', password } }) });
    assert.equal(created.statusCode, 201);
    const bob = (JSON.parse(created.body) as { user: { id: number } }).user.id;
    const newPassword = 'secret-password-of-bob-2';
    const bobAuth = t.basic('bob', password);
    const login = await t.app.inject({ method: 'GET', url: '/version.json', headers: { authorization: bobAuth } });
    const session = tokenOf(login);
    const defaultKey = (JSON.parse((await t.app.inject({ method: 'POST', url: `/users/${bob}/make_new_api_key.json`, headers: { authorization: bobAuth } })).body) as { user: { api_key: string } }).user.api_key;
    const namedKey = (JSON.parse((await t.app.inject({ method: 'POST', url: `/users/${bob}/user_api_keys.json`, headers: { authorization: bobAuth, ...JSON_BODY }, payload: '{"description":"ci"}' })).body) as { user_api_key: { api_key: string } }).user_api_key.api_key;
    const changed = await t.app.inject({ method: 'PUT', url: `/users/${bob}.json`, headers: { authorization: bobAuth, ...JSON_BODY }, payload: JSON.stringify({ user: { password: newPassword, current_password: password } }) });
    assert.equal(changed.statusCode, 204, changed.body);
    const consoleCookie = await consoleSession(t, 'bob', newPassword);
    const ingest = await t.app.inject({ method: 'POST', url: '/sysadmin_tools/infrastructure/ingest_keys.json', headers: { authorization: t.adminAuth, ...JSON_BODY }, payload: '{"label":"secret test"}' });
    const publicKey = (JSON.parse(ingest.body) as { ingest_key: { public_key: string } }).ingest_key.public_key;
    const hash = (await t.database.db.selectFrom('users').select('password_hash').where('id', '=', bob).executeTakeFirstOrThrow()).password_hash;

    const all = JSON.stringify(await rows(t));
    for (const secret of [password, newPassword, defaultKey, namedKey, session, consoleCookie.split('=')[1]!, publicKey, hash, hash.split('$').at(-1)!]) {
      assert.ok(secret.length >= 16 && !all.includes(secret), `no secret in the trail: ${secret.slice(0, 6)}…`);
    }
    const keyId = Number((await t.database.db.selectFrom('user_api_keys').select('id').where('user_id', '=', bob).where('description', '=', 'ci').executeTakeFirstOrThrow()).id);
    const bobRows = (await rows(t)).filter((row) => row.target_type === 'user' && row.target_id === bob).map((row) => [row.action, row.changes]);
    assert.deepEqual(bobRows, [
      ['user.create', '{"login":"bob","email":"bob@example.com","first_name":"","last_name":"","status":"active","time_zone":null,"locale":null,"bucket_id":null,"user_group_id":null,"role_ids":[2],"password":"[redacted]"}'],
      ['user.api_key.create', '{"api_key":"[redacted]","default":true}'],
      ['user.api_key.create', `{"key_id":${keyId},"description":"ci","api_key":"[redacted]"}`],
      ['user.update', '{"password":"[redacted]"}'],
      ['session.create', '{}'],
    ]);
  });

  it('lists the trail newest first, paginated like users, with its filters, in JSON and XML; 422 for what it does not know; 403 without audit_log.read', async () => {
    const total = (await rows(t)).length;
    const page = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?per_page=2`, headers: { authorization: t.adminAuth } });
    assert.equal(page.statusCode, 200);
    assert.equal(page.headers['x-total'], String(total));
    assert.equal(page.headers['x-limit'], '2');
    assert.equal(page.headers['x-page'], '1');
    const last = Math.ceil(total / 2);
    assert.equal(page.headers.link, `</sysadmin_tools/audit_log.json?page=1&per_page=2>; rel="first", </sysadmin_tools/audit_log.json?page=2&per_page=2>; rel="next", </sysadmin_tools/audit_log.json?page=${last}&per_page=2>; rel="last"`);
    const newest = (await rows(t)).slice(-2).reverse();
    const wire = (row: Row) => ({ audit_event: { id: row.id, at: `${row.at.slice(0, 19)}+00:00`, actor_id: row.actor_id, actor_login: row.actor_login, credential: row.credential, address: row.address, request_id: row.request_id, action: row.action, target_type: row.target_type, target_id: row.target_id, changes: JSON.parse(row.changes) as unknown } });
    assert.deepEqual(JSON.parse(page.body), newest.map(wire));

    const updates = (await rows(t)).filter((row) => row.action === 'user.update' && row.target_id === t.alice.id).reverse();
    const filtered = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?action=user.update&target_type=user&target_id=${t.alice.id}&actor_id=${t.alice.id}`, headers: { authorization: t.adminAuth } });
    assert.deepEqual(JSON.parse(filtered.body), updates.filter((row) => row.actor_id === t.alice.id).map(wire));
    assert.equal(filtered.headers['x-total'], String(updates.filter((row) => row.actor_id === t.alice.id).length));

    const at = (await rows(t))[0]!.at;
    const since = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?since=${encodeURIComponent(at)}&until=${encodeURIComponent(at)}&per_page=1000`, headers: { authorization: t.adminAuth } });
    assert.equal(since.headers['x-total'], String((await rows(t)).filter((row) => row.at === at).length));
    const future = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?since=2099-01-01T00:00:00Z`, headers: { authorization: t.adminAuth } });
    assert.deepEqual([future.statusCode, future.body, future.headers['x-total']], [200, '[]', '0']);

    const one = (await rows(t)).find((row) => row.action === 'user.update' && row.request_id === 'who-1')!;
    const xml = await t.app.inject({ method: 'GET', url: `${AUDIT}.xml?action=user.update&actor_id=${t.admin.id}&target_id=${t.alice.id}&per_page=1`, headers: { authorization: t.adminAuth } });
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<audit_events type="array">
  <audit_event>
    <id type="integer">${one.id}</id>
    <at type="datetime">${one.at.slice(0, 19)}+00:00</at>
    <actor_id type="integer">${t.admin.id}</actor_id>
    <actor_login>admin</actor_login>
    <credential>password</credential>
    <address>127.0.0.1</address>
    <request_id>who-1</request_id>
    <action>user.update</action>
    <target_type>user</target_type>
    <target_id type="integer">${t.alice.id}</target_id>
    <changes>{"first_name":["Alice","Alicia"],"locale":[null,"fr"]}</changes>
  </audit_event>
</audit_events>
`);

    const unknown = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?actor=1&target_id=x&since=yesterday&action=DROP%20TABLE`, headers: { authorization: t.adminAuth } });
    assert.equal(unknown.statusCode, 422);
    assert.equal(unknown.body, '{"errors":{"actor":["is not a parameter of this list"],"action":["must be 1 to 64 lower-case letters, digits, dots and underscores"],"target_id":["must be an id"],"since":["must be a datetime (docs/api.md#datetimes)"]}}');
    const badPage = await t.app.inject({ method: 'GET', url: `${AUDIT}.json?per_page=0`, headers: { authorization: t.adminAuth } });
    assert.equal(badPage.statusCode, 422);
    const forbidden = await t.app.inject({ method: 'GET', url: `${AUDIT}.json`, headers: { authorization: t.aliceAuth } });
    assert.equal(forbidden.statusCode, 403);
    const anonymous = await t.app.inject({ method: 'GET', url: `${AUDIT}.json` });
    assert.equal(anonymous.statusCode, 401);
  });

  it('is pruned after CMI_AUDIT_RETENTION_DAYS (default 400) by the retention job, which records the prune as system', async () => {
    assert.equal(loadConfig({}).auditRetentionDays, 400);
    assert.equal(loadConfig({ CMI_AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays, 30);
    assert.throws(() => loadConfig({ CMI_AUDIT_RETENTION_DAYS: '0' }), /CMI_AUDIT_RETENTION_DAYS must be an integer from 1 to 36500/);
    // The errors' retention is recorded too: `cmi local errors prune` (system clock, a day's retention) removes the error reported above.
    const stale = await t.database.db.selectFrom('infrastructure_errors').select('id').execute();
    assert.equal(stale.length, 1);
    await errorCommands(t.database, { ...t.config, errors: { ...t.config.errors, retentionDays: 1 } }).prune();
    const pruned = (await rows(t)).at(-1)!;
    assert.deepEqual([pruned.actor_id, pruned.actor_login, pruned.credential, pruned.action, pruned.target_type, pruned.target_id, pruned.changes],
      [null, 'system', 'local', 'retention', 'infrastructure_error', null, '{"errors":1,"hourly_counts":0,"retention_days":1}']);
    const trail = auditTrailOn(t.database, t.time.clock, 400);
    const before = (await rows(t)).length;
    assert.equal(await trail.prune(), 0);
    assert.equal((await rows(t)).length, before, 'a run that removed nothing is not recorded');
    t.time.advance(399 * 86_400);
    await trail.record({ id: t.admin.id, login: 'admin', credential: 'password' }, { action: 'user.update', target_type: 'user', target_id: t.admin.id, changes: {} });
    t.time.advance(2 * 86_400);
    // Older than 400 days now: every row written at the test clock's start (the local commands' rows carry the system clock's time).
    const cutoff = new Date(t.time.clock().getTime() - 400 * 86_400_000).toISOString();
    const old = (await rows(t)).filter((row) => row.at < cutoff);
    const kept = (await rows(t)).filter((row) => row.at >= cutoff).map((row) => row.id);
    assert.ok(old.length > 40 && old.every((row) => row.at === '2026-11-20T10:00:00.000Z'), 'the rows of the tests above are old');
    assert.equal(await trail.prune(), old.length);
    const left = await rows(t);
    assert.deepEqual(left.slice(0, -1).map((row) => row.id), kept);
    assert.deepEqual(left.slice(-2).map((row) => [row.actor_id, row.actor_login, row.credential, row.action, row.target_type, row.changes]), [
      [t.admin.id, 'admin', 'password', 'user.update', 'user', '{}'],
      [null, 'system', 'system', 'retention', 'audit_events', `{"removed":${old.length},"retention_days":400}`],
    ]);
  });
});

describe('the console\'s audit log', () => {
  it('lists the trail with its filters for holders of audit_log.read, escaped; offers and serves it to no one else', async () => {
    const t = await createTestApp();
    try {
      const cookie = await consoleSession(t);
      await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, ...JSON_BODY, 'x-request-id': 'console-1' }, payload: '{"first_name":"<b>Al</b>"}' });
      const all = await t.app.inject({ method: 'GET', url: '/console/audit', headers: { cookie } });
      assert.equal(all.statusCode, 200);
      assert.equal(all.headers['x-total'], '2');
      assert.ok(all.body.includes('<a href="/console/audit">Audit log</a>'), 'in the navigation');
      assert.ok(all.body.includes('<td><code>user.update</code></td><td>user <a href="/console/users/2">alice</a></td><td><ul class="diff"><li><span class="field">first_name</span>: <del>Alice</del> → <ins>&lt;b&gt;Al&lt;/b&gt;</ins></li></ul></td><td><code>console-1</code></td>'), all.body);
      assert.ok(all.body.includes('<td><code>session.create</code></td>'), 'the sign-in');
      const filtered = await t.app.inject({ method: 'GET', url: '/console/audit?action=session.create&actor_id=&target_type=&target_id=&since=&until=', headers: { cookie } });
      assert.equal(filtered.headers['x-total'], '1');
      assert.ok(filtered.body.includes('<input name="action" value="session.create" maxlength="64">'), 'the filter kept in the form');
      assert.ok(!filtered.body.includes('user.update'));
      const bad = await t.app.inject({ method: 'GET', url: '/console/audit?since=yesterday', headers: { cookie } });
      assert.equal(bad.statusCode, 422);
      assert.ok(bad.body.includes('<p>since must be a datetime (docs/api.md#datetimes)</p>'), bad.body);

      // A page that hands a service the viewer (the errors pages) is recorded as fully as the others.
      const reported = recordOf(await report(t, fault(1)));
      const confirm = await t.app.inject({ method: 'GET', url: `/console/errors/${reported.id}/delete`, headers: { cookie } });
      const triaged = await t.app.inject({ method: 'POST', url: `/console/errors/${reported.id}/triage`, headers: { ...FORM, cookie, 'x-request-id': 'console-triage' }, payload: new URLSearchParams({ _csrf: csrfOf(confirm.body), action: 'resolve' }).toString() });
      assert.equal(triaged.statusCode, 303, triaged.body);
      assert.deepEqual((await rows(t)).filter((r) => r.request_id === 'console-triage').map((r) => [r.actor_id, r.credential, r.address, r.action, r.target_id, r.changes]),
        [[t.admin.id, 'session', '127.0.0.1', 'infrastructure_error.triage', reported.id, '{"status":["unresolved","resolved"]}']]);
      const deleted = await t.app.inject({ method: 'POST', url: `/console/errors/${reported.id}/delete`, headers: { ...FORM, cookie, 'x-request-id': 'console-2' }, payload: new URLSearchParams({ _csrf: csrfOf(confirm.body) }).toString() });
      assert.equal(deleted.statusCode, 303);
      const row = (await rows(t)).at(-1)!;
      assert.deepEqual([row.actor_id, row.actor_login, row.credential, row.address, row.request_id, row.action, row.target_id],
        [t.admin.id, 'admin', 'session', '127.0.0.1', 'console-2', 'infrastructure_error.delete', reported.id]);
      const signOut = await t.app.inject({ method: 'POST', url: '/console/sign-out', headers: { ...FORM, cookie, 'x-request-id': 'console-3' }, payload: new URLSearchParams({ _csrf: csrfOf(confirm.body) }).toString() });
      assert.equal(signOut.statusCode, 303);
      assert.deepEqual((await rows(t)).filter((r) => r.request_id === 'console-3').map((r) => [r.actor_id, r.credential, r.action]), [[t.admin.id, 'session', 'session.delete']]);

      const aliceCookie = await consoleSession(t, ALICE.login, ALICE.password);
      const users = await t.app.inject({ method: 'GET', url: '/console/users', headers: { cookie: aliceCookie } });
      assert.ok(!users.body.includes('/console/audit'), 'no link');
      assert.equal((await t.app.inject({ method: 'GET', url: '/console/audit', headers: { cookie: aliceCookie } })).statusCode, 403);
    } finally {
      await t.close();
    }
  });
});

describe('the access log', () => {
  it('names the request\'s actor as the audit trail does (actor_id), on the same request id', async () => {
    const t = await createTestApp();
    const lines: string[] = [];
    const { buildApp } = await import('../src/app/app.js');
    const app = await buildApp({ config: { ...t.config, accessLog: true }, database: t.database, clock: t.time.clock, logger: false, writeAccessLog: (line) => lines.push(line) });
    try {
      const res = await app.inject({ method: 'POST', url: `/users/${t.alice.id}/suspend.json`, headers: { authorization: t.adminAuth, 'x-request-id': 'log-1' } });
      assert.equal(res.statusCode, 200);
      const line = JSON.parse(lines[0]!) as Record<string, unknown>;
      const row = (await rows(t)).find((r) => r.request_id === 'log-1')!;
      assert.deepEqual([line.request_id, line.actor_id], [row.request_id, row.actor_id]);
      assert.equal(line.actor_id, t.admin.id);
    } finally {
      await app.close();
      await t.close();
    }
  });
});

describe('behind CMI_TRUST_PROXY', () => {
  it('records a change whose forwarded address is longer than the column holds, cut to 64 characters, rather than make the change and fail its row', async () => {
    const t = await createTestApp({ CMI_TRUST_PROXY: 'true' });
    try {
      const forwarded = 'not-an-address-'.repeat(8);
      const res = await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/suspend.json`, headers: { authorization: t.adminAuth, 'x-forwarded-for': forwarded, 'x-request-id': 'forwarded-1' } });
      assert.equal(res.statusCode, 200, res.body);
      const row = (await rows(t)).find((r) => r.request_id === 'forwarded-1');
      assert.deepEqual([row?.action, row?.address], ['user.suspend', forwarded.slice(0, 64)]);
    } finally {
      await t.close();
    }
  });
});

describe('cmi/client auditLog and cmi audit against a real cmi', () => {
  let t: TestApp;
  let baseUrl: string;
  let home: string;
  let env: Record<string, string>;
  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '0' });
    baseUrl = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-audit-'));
    env = {
      XDG_CONFIG_HOME: join(home, 'config'), CMI_PROFILE: '', CMI_API_KEY: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}`,
      CMI_URL: baseUrl, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password,
    };
    for (const [n, name] of ['Ann', 'Bea', 'Cy'].entries()) {
      const res = await t.app.inject({ method: 'PUT', url: `/users/${t.alice.id}.json`, headers: { authorization: t.adminAuth, ...JSON_BODY, 'x-request-id': `client-${n}` }, payload: JSON.stringify({ first_name: name }) });
      assert.equal(res.statusCode, 204);
    }
    await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/suspend.json`, headers: { authorization: t.adminAuth, 'x-request-id': 'client-3' } });
    await t.app.inject({ method: 'POST', url: `/users/${t.alice.id}/activate.json`, headers: { authorization: t.adminAuth, 'x-request-id': 'client-4' } });
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const typed = (row: Row): AuditEvent => ({ ...row, at: new Date(row.at.slice(0, 19) + 'Z'), changes: JSON.parse(row.changes) as Record<string, unknown> });

  for (const format of ['json', 'xml'] as const) {
    it(`client.auditLog.list and all (${format}): the events typed, newest first, filtered; 403 for a user without audit_log.read`, async () => {
      const admin = new CmiClient({ baseUrl, login: ADMIN.login, password: ADMIN.password, format });
      const updates = (await rows(t)).filter((row) => row.action === 'user.update').reverse();
      const page = await admin.auditLog.list({ action: 'user.update', target_type: 'user', target_id: t.alice.id, actor_id: t.admin.id, since: new Date('2026-11-20T09:00:00Z'), until: '2026-11-20T11:00:00Z', perPage: 2 });
      assert.deepEqual([page.total, page.page, page.limit, page.hasMore], [3, 1, 2, true]);
      assert.deepEqual(page.items, updates.slice(0, 2).map(typed));
      const walked: AuditEvent[] = [];
      for await (const event of admin.auditLog.all({ perPage: 2 })) walked.push(event);
      assert.deepEqual(walked, (await rows(t)).reverse().map(typed));
      const alice = new CmiClient({ baseUrl, login: ALICE.login, password: ALICE.password, format });
      await assert.rejects(alice.auditLog.list(), CmiPermissionError);
      await assert.rejects(admin.auditLog.list({ action: 'Not An Action' }), (error: unknown) =>
        // XML's error body carries the messages without their fields (docs/api.md#errors).
        error instanceof CmiValidationError && error.status === 422 && (format === 'xml' || JSON.stringify(error.errors) === '{"action":["must be 1 to 64 lower-case letters, digits, dots and underscores"]}'));
    });
  }

  it('cmi audit: a table, newest first, with its filters; --json and --xml the API\'s bodies; --all; usage mistakes exit 2', async () => {
    const cmi = (...args: string[]) => runCmi(['audit', ...args], env);
    const api = async (path: string) => (await t.app.inject({ url: path, headers: { authorization: t.adminAuth } })).body;
    const ids = (await rows(t)).map((row) => row.id);
    const at = '2026-11-20T10:00:00+00:00';
    const table = await cmi('--action', 'user.update', '--actor', String(t.admin.id), '--target-type', 'user', '--target-id', String(t.alice.id), '--since', '2026-11-20', '--per-page', '2');
    assert.equal(table.stderr, '');
    assert.equal(table.stdout,
      'ID  AT                         ACTOR      CREDENTIAL  ADDRESS    ACTION       TARGET  CHANGES\n' +
      `${ids[2]}   ${at}  admin (1)  password    127.0.0.1  user.update  user 2  {"first_name":["Bea","Cy"]}\n` +
      `${ids[1]}   ${at}  admin (1)  password    127.0.0.1  user.update  user 2  {"first_name":["Ann","Bea"]}\n` +
      '2 of 3 events (page 1 of 2)\n');
    assert.equal(table.code, 0);
    const [json, xml, all] = await Promise.all([cmi('--json', '--target-id', String(t.alice.id)), cmi('--xml', '--action', 'user.suspend'), cmi('--all', '--json', '--per-page', '1')]);
    assert.deepEqual([json.stdout, json.code], [`${await api(`${AUDIT}.json?target_id=${t.alice.id}`)}\n`, 0]);
    assert.deepEqual([xml.stdout, xml.code], [await api(`${AUDIT}.xml?action=user.suspend`), 0]);
    assert.deepEqual([all.stdout, all.code], [`${await api(`${AUDIT}.json?per_page=1000`)}\n`, 0]);
    const bad = await cmi('--actor', 'me');
    assert.deepEqual([bad.stdout, bad.stderr, bad.code], ['', 'cmi: --actor must be a positive integer (got "me")\n', 2]);
    const refused = await runCmi(['audit'], { ...env, CMI_USER: ALICE.login, CMI_PASSWORD: ALICE.password });
    assert.deepEqual([refused.stdout, refused.stderr, refused.code], ['', 'cmi: You are not authorized to perform this action (needs audit_log.read)\n', 1]);
  });
});
