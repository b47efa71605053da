import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { runCmi } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { ERRORS, forbiddenJson, NOT_FOUND_JSON } from './support/error-reports.js';

// Error triage (docs/api.md#error-triage): status, snooze, assignee, notes, activity, bulk, regressions.

const AT = '2026-11-20T10:00:00+00:00';

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, auth = t.adminAuth, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

const fault = (n: number | string, extra: Record<string, unknown> = {}) => ({ error_class: 'RangeError', message: `pool exhausted ${n}`, backtrace: `src/hypervisor/pool.ts:88:in 'allocate${n}'`, ...extra });

async function reportError(t: TestApp, n: number | string, extra: Record<string, unknown> = {}): Promise<number> {
  const res = await call(t, 'POST', `${ERRORS}.json`, fault(n, extra));
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  return (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
}

const triageJson = (fields: Partial<Record<string, unknown>> = {}) => JSON.stringify({
  triage: {
    status: 'unresolved', assignee_id: null, snoozed_until: null, snooze_occurrences: null, resolved_at: null, resolved_by_id: null, regressed_at: null, resolved_in_release: null, updated_at: AT, ...fields,
  },
});

const statusOf = (res: LightMyRequestResponse) => (JSON.parse(res.body) as { triage: Record<string, unknown> }).triage;
const ids = (res: LightMyRequestResponse) => (JSON.parse(res.body) as Array<{ infrastructure_error: { id: number } }>).map((e) => e.infrastructure_error.id);
const activityOf = async (t: TestApp, id: number) =>
  (JSON.parse((await call(t, 'GET', `${ERRORS}/${id}/activity.json`)).body) as Array<{ activity: { action: string; actor_id: number | null; details: Record<string, unknown> } }>)
    .map(({ activity }) => `${activity.action}:${activity.actor_id ?? '-'}:${JSON.stringify(activity.details)}`);

describe('error triage', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('a new error is unresolved; resolve, ignore, snooze and back, exact in JSON and XML', async () => {
    const id = await reportError(t, 1);
    const fresh = await call(t, 'GET', `${ERRORS}/${id}/triage.json`);
    assert.equal(fresh.statusCode, 200);
    assert.equal(fresh.body, triageJson());

    t.time.advance(60);
    const resolved = await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { triage: { status: 'resolved' } });
    assert.equal(resolved.statusCode, 200);
    assert.equal(resolved.body, triageJson({ status: 'resolved', resolved_at: '2026-11-20T10:01:00+00:00', resolved_by_id: t.admin.id, updated_at: '2026-11-20T10:01:00+00:00' }));

    const xml = await call(t, 'GET', `${ERRORS}/${id}/triage.xml`);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>
<triage>
  <status>resolved</status>
  <assignee_id nil="true"/>
  <snoozed_until nil="true"/>
  <snooze_occurrences nil="true"/>
  <resolved_at type="datetime">2026-11-20T10:01:00+00:00</resolved_at>
  <resolved_by_id type="integer">${t.admin.id}</resolved_by_id>
  <regressed_at nil="true"/>
  <resolved_in_release nil="true"/>
  <updated_at type="datetime">2026-11-20T10:01:00+00:00</updated_at>
</triage>
`);

    t.time.advance(60);
    // Unwrapped, as the Go SDK sends it; then XML.
    const ignored = await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'ignored' });
    assert.equal(ignored.body, triageJson({ status: 'ignored', updated_at: '2026-11-20T10:02:00+00:00' }));
    const snoozed = await call(t, 'PUT', `${ERRORS}/${id}/triage.xml`, '<triage><status>snoozed</status><snoozed_until>2026-11-21T10:00:00Z</snoozed_until><snooze_occurrences type="integer">100</snooze_occurrences></triage>', t.adminAuth, 'application/xml');
    assert.equal(snoozed.statusCode, 200);
    assert.match(snoozed.body, /<status>snoozed<\/status>\n {2}<assignee_id nil="true"\/>\n {2}<snoozed_until type="datetime">2026-11-21T10:00:00\+00:00<\/snoozed_until>\n {2}<snooze_occurrences type="integer">100<\/snooze_occurrences>/);
    const back = await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { triage: { status: 'unresolved' } });
    assert.equal(back.body, triageJson({ updated_at: '2026-11-20T10:02:00+00:00' }));

    // The record keeps its nine fields.
    const record = JSON.parse((await call(t, 'GET', `${ERRORS}/${id}.json`)).body) as { infrastructure_error: object };
    assert.deepEqual(Object.keys(record.infrastructure_error), ['id', 'backtrace', 'counter', 'created_at', 'error_class', 'fingerprint', 'message', 'reported', 'updated_at']);

    assert.deepEqual(await activityOf(t, id), [
      'first_seen:-:{}',
      `status:${t.admin.id}:{"from":"unresolved","to":"resolved"}`,
      `status:${t.admin.id}:{"from":"resolved","to":"ignored"}`,
      `status:${t.admin.id}:{"from":"ignored","to":"snoozed","snoozed_until":"2026-11-21T10:00:00+00:00","snooze_occurrences":100}`,
      `status:${t.admin.id}:{"from":"snoozed","to":"unresolved"}`,
    ]);
  });

  it('refuses what it cannot do with a 422 naming the field, in the requested format; 404 and 403', async () => {
    const id = await reportError(t, 1);
    const put = (body: unknown, format = 'json') => call(t, 'PUT', `${ERRORS}/${id}/triage.${format}`, body);
    assert.deepEqual([(await put({ status: 'fixed' })).statusCode, (await put({ status: 'fixed' })).body], [422, '{"errors":{"status":["must be one of unresolved, resolved, ignored, snoozed"]}}']);
    assert.equal((await put({ status: 'snoozed', snoozed_until: '2026-11-20T09:59:59Z' })).body, '{"errors":{"snoozed_until":["must be in the future"]}}');
    assert.equal((await put({ status: 'snoozed' })).body, '{"errors":{"status":["snoozed needs snoozed_until or snooze_occurrences"]}}');
    assert.equal((await put({ status: 'resolved', snooze_occurrences: 3 })).body, '{"errors":{"snooze_occurrences":["is only given with status snoozed"]}}');
    assert.equal((await put({ status: 'snoozed', snooze_occurrences: 0 })).body, '{"errors":{"snooze_occurrences":["must be an integer from 1 to 1000000000"]}}');
    // Alice holds no infrastructure_errors.read; 999 is no one.
    assert.equal((await put({ assignee_id: t.alice.id })).body, '{"errors":{"assignee_id":["must be a user who may read infrastructure errors"]}}');
    assert.equal((await put({ assignee_id: 999 })).body, '{"errors":{"assignee_id":["must be a user who may read infrastructure errors"]}}');
    // Past the largest id a column holds: a 422 on both databases, never PostgreSQL's 500.
    assert.equal((await put({ assignee_id: 2147483648 })).body, '{"errors":{"assignee_id":["must be the id of a user, or null"]}}');
    const bulk = await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'resolved' }, ids: [id, 99999999999] });
    assert.deepEqual([bulk.statusCode, bulk.body], [422, '{"errors":{"ids":["must be a list of ids"]}}']);
    const xml = await put({ status: 'fixed' }, 'xml');
    assert.equal(xml.statusCode, 422);
    assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Status must be one of unresolved, resolved, ignored, snoozed</error>\n</errors>\n');
    assert.equal((await call(t, 'PUT', `${ERRORS}/999/triage.json`, { status: 'resolved' })).body, NOT_FOUND_JSON);
    assert.equal((await call(t, 'GET', `${ERRORS}/999/triage.json`)).statusCode, 404);
    assert.equal((await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'resolved' }, t.aliceAuth)).body, forbiddenJson('infrastructure_errors.triage'));
    assert.equal((await call(t, 'GET', `${ERRORS}/${id}/triage.json`, undefined, t.aliceAuth)).statusCode, 403);
    // Nothing changed.
    assert.equal((await call(t, 'GET', `${ERRORS}/${id}/triage.json`)).body, triageJson());
  });

  it('a snooze ends when its time passes (read, or the retention job) or its count is reached', async () => {
    const byTime = await reportError(t, 1);
    const byCount = await reportError(t, 2);
    await call(t, 'PUT', `${ERRORS}/${byTime}/triage.json`, { status: 'snoozed', snoozed_until: '2026-11-20T11:00:00Z' });
    await call(t, 'PUT', `${ERRORS}/${byCount}/triage.json`, { status: 'snoozed', snooze_occurrences: 3 });
    const snoozedList = await call(t, 'GET', `${ERRORS}.json?status=snoozed`);
    assert.deepEqual([ids(snoozedList), snoozedList.headers['x-total']], [[byCount, byTime], '2']);

    // Two more occurrences: still snoozed; the third wakes it.
    await reportError(t, 2);
    await reportError(t, 2);
    assert.equal(statusOf(await call(t, 'GET', `${ERRORS}/${byCount}/triage.json`)).status, 'snoozed');
    await reportError(t, 2);
    assert.equal(statusOf(await call(t, 'GET', `${ERRORS}/${byCount}/triage.json`)).status, 'unresolved');

    // The list read just before the hour is cached; past it, the same list shows the snooze ended.
    t.time.set('2026-11-20T10:59:59.000Z');
    assert.deepEqual(ids(await call(t, 'GET', `${ERRORS}.json?status=snoozed`)), [byTime]);
    t.time.set('2026-11-20T11:00:00.000Z');
    const after = await call(t, 'GET', `${ERRORS}.json?status=snoozed`);
    assert.deepEqual([ids(after), after.headers['x-total']], [[], '0']);
    assert.equal((await call(t, 'GET', `${ERRORS}/${byTime}/triage.json`)).body, triageJson({ updated_at: '2026-11-20T11:00:00+00:00' }));
    assert.deepEqual((await activityOf(t, byTime)).slice(-1), ['status:-:{"from":"snoozed","to":"unresolved","reason":"time"}']);
    assert.deepEqual((await activityOf(t, byCount)).slice(-1), ['status:-:{"from":"snoozed","to":"unresolved","reason":"occurrences"}']);
  });

  it('assigns to users who may read errors, filters by assignee=me|none|<id>, unassigns a deleted user', async () => {
    const [boss] = await t.addUsers(1, 'admin');
    const a = await reportError(t, 1);
    const b = await reportError(t, 2);
    const c = await reportError(t, 3);
    assert.equal(statusOf(await call(t, 'PUT', `${ERRORS}/${a}/triage.json`, { assignee_id: t.admin.id })).assignee_id, t.admin.id);
    await call(t, 'PUT', `${ERRORS}/${b}/triage.json`, { triage: { assignee_id: String(boss!.id) } });
    const mine = await call(t, 'GET', `${ERRORS}.json?assignee=me`);
    assert.deepEqual([ids(mine), mine.headers['x-total']], [[a], '1']);
    assert.deepEqual(ids(await call(t, 'GET', `${ERRORS}.json?assignee=${boss!.id}`)), [b]);
    const none = await call(t, 'GET', `${ERRORS}.json?assignee=none`);
    assert.deepEqual([ids(none), none.headers['x-total']], [[c], '1']);
    assert.equal((await call(t, 'GET', `${ERRORS}.json?assignee=someone`)).body, '{"errors":{"assignee":["must be me, none or the id of a user"]}}');
    assert.equal((await call(t, 'GET', `${ERRORS}.json?assignee=2147483648`)).body, '{"errors":{"assignee":["must be me, none or the id of a user"]}}');

    // Deleting the user (the first DELETE marks it deleted) unassigns it; the list read before shows it no more.
    assert.equal((await call(t, 'DELETE', `/users/${boss!.id}.json`)).statusCode, 204);
    assert.deepEqual(ids(await call(t, 'GET', `${ERRORS}.json?assignee=${boss!.id}`)), []);
    assert.equal(statusOf(await call(t, 'GET', `${ERRORS}/${b}/triage.json`)).assignee_id, null);
    assert.deepEqual((await activityOf(t, b)).slice(1), [`assign:${t.admin.id}:{"from":null,"to":${boss!.id}}`, `assign:-:{"from":${boss!.id},"to":null,"reason":"user_deleted"}`]);
    // Unassigning.
    assert.equal(statusOf(await call(t, 'PUT', `${ERRORS}/${a}/triage.json`, { assignee_id: null })).assignee_id, null);
    // Removing a user for good (the second DELETE) unassigns it too.
    const [other] = await t.addUsers(1, 'admin');
    await call(t, 'PUT', `${ERRORS}/${c}/triage.json`, { assignee_id: other!.id });
    await t.database.db.updateTable('users').set({ status: 'deleted' }).where('id', '=', other!.id).execute();
    await t.database.db.updateTable('error_triage').set({ assignee_id: other!.id }).where('error_id', '=', c).execute();
    assert.equal((await call(t, 'DELETE', `/users/${other!.id}.json`)).statusCode, 204);
    assert.equal(statusOf(await call(t, 'GET', `${ERRORS}/${c}/triage.json`)).assignee_id, null);
  });

  it('notes: plain text, bounded, listed oldest first, deleted by their author or an administrator', async () => {
    const id = await reportError(t, 1);
    const made = await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { note: { body: '<b>not ours</b> & the DNS' } });
    assert.equal(made.statusCode, 201);
    assert.equal(made.body, `{"note":{"id":1,"error_id":${id},"author_id":${t.admin.id},"body":"<b>not ours</b> & the DNS","created_at":"${AT}"}}`);
    const xml = await call(t, 'POST', `${ERRORS}/${id}/notes.xml`, '<note><body>second</body></note>', t.adminAuth, 'application/xml');
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>\n<note>\n  <id type="integer">2</id>\n  <error_id type="integer">${id}</error_id>\n  <author_id type="integer">${t.admin.id}</author_id>\n  <body>second</body>\n  <created_at type="datetime">${AT}</created_at>\n</note>\n`);
    const listed = await call(t, 'GET', `${ERRORS}/${id}/notes.xml`);
    assert.match(listed.body, /<notes type="array">\n {2}<note>\n {4}<id type="integer">1<\/id>[\s\S]*<body>&lt;b&gt;not ours&lt;\/b&gt; &amp; the DNS<\/body>[\s\S]*<id type="integer">2<\/id>/);
    assert.equal(listed.headers['x-total'], '2');

    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { note: { body: 'x'.repeat(10_001) } })).body, '{"errors":{"body":["is too long (maximum is 10000 characters)"]}}');
    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { note: { body: '  ' } })).body, '{"errors":{"body":["can\'t be blank"]}}');
    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { note: { body: 'hi' } }, t.aliceAuth)).statusCode, 403);
    assert.equal((await call(t, 'POST', `${ERRORS}/999/notes.json`, { note: { body: 'hi' } })).statusCode, 404);

    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/1.json`, undefined, t.aliceAuth)).statusCode, 403);
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/1.json`)).statusCode, 204);
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/1.json`)).statusCode, 404);
    assert.deepEqual(await activityOf(t, id), ['first_seen:-:{}', `note:${t.admin.id}:{"note_id":1}`, `note:${t.admin.id}:{"note_id":2}`, `note_deleted:${t.admin.id}:{"note_id":1}`]);
  });

  it('activity: exact records, oldest first, paginated; report and delete of the error', async () => {
    const id = await reportError(t, 1);
    t.time.advance(5);
    await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'resolved', assignee_id: t.admin.id });
    const page = await call(t, 'GET', `${ERRORS}/${id}/activity.json?per_page=2&page=1`);
    assert.equal(page.headers['x-total'], '3');
    assert.equal(page.body, `[{"activity":{"id":1,"at":"${AT}","actor_id":null,"action":"first_seen","details":{}}},{"activity":{"id":2,"at":"2026-11-20T10:00:05+00:00","actor_id":${t.admin.id},"action":"status","details":{"from":"unresolved","to":"resolved"}}}]`);
    const xml = await call(t, 'GET', `${ERRORS}/${id}/activity.xml?per_page=1&page=3`);
    assert.equal(xml.body, `<?xml version="1.0" encoding="UTF-8"?>\n<activities type="array">\n  <activity>\n    <id type="integer">3</id>\n    <at type="datetime">2026-11-20T10:00:05+00:00</at>\n    <actor_id type="integer">${t.admin.id}</actor_id>\n    <action>assign</action>\n    <details>{"from":null,"to":${t.admin.id}}</details>\n  </activity>\n</activities>\n`);
    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/report.json`)).statusCode, 200);
    assert.deepEqual((await activityOf(t, id)).slice(-1), [`report:${t.admin.id}:{}`]);
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}.json`)).statusCode, 204);
    assert.equal((await call(t, 'GET', `${ERRORS}/${id}/activity.json`)).statusCode, 404);
    const left = await t.database.db.selectFrom('error_activity').select('id').execute();
    assert.deepEqual(left, []);
  });

  it('other roles triage only with infrastructure_errors.triage, write notes with .notes, delete others\' notes with .notes.delete', async () => {
    const id = await reportError(t, 1);
    const role = async (label: string, permissionIds: number[]) =>
      (JSON.parse((await call(t, 'POST', '/roles.json', { role: { label, permission_ids: permissionIds } })).body) as { role: { id: number } }).role.id;
    const readers = await role('Readers', [22]);
    const triagers = await role('Triagers', [22, 32, 33]);
    const [reader, triager, other] = await t.addUsers(3);
    const give = (user: { id: number }, roleId: number) => call(t, 'PUT', `/users/${user.id}.json`, { user: { role_ids: [roleId] } });
    await give(reader!, readers);
    await give(triager!, triagers);
    await give(other!, triagers);
    const as = (user: { login: string }) => t.basic(user.login, 'shared-password');
    assert.equal((await call(t, 'GET', `${ERRORS}/${id}/triage.json`, undefined, as(reader!))).statusCode, 200);
    assert.equal((await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'ignored' }, as(reader!))).body, forbiddenJson('infrastructure_errors.triage'));
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json?all=true`, { triage: { status: 'ignored' } }, as(reader!))).statusCode, 403);
    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { body: 'mine' }, as(reader!))).statusCode, 403);
    // A reader may be assigned; the triager assigns it and ignores the error.
    const changed = await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'ignored', assignee_id: reader!.id }, as(triager!));
    assert.deepEqual([changed.statusCode, statusOf(changed)], [200, { status: 'ignored', assignee_id: reader!.id, snoozed_until: null, snooze_occurrences: null, resolved_at: null, resolved_by_id: null, regressed_at: null, resolved_in_release: null, updated_at: AT }]);
    assert.equal((await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { body: 'mine' }, as(triager!))).statusCode, 201);
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/1.json`, undefined, as(other!))).body, forbiddenJson('infrastructure_errors.notes.delete'));
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/1.json`, undefined, as(triager!))).statusCode, 204);
    await call(t, 'POST', `${ERRORS}/${id}/notes.json`, { body: 'again' }, as(triager!));
    // The administrator holds infrastructure_errors.notes.delete.
    assert.equal((await call(t, 'DELETE', `${ERRORS}/${id}/notes/2.json`)).statusCode, 204);
  });

  it('lists by status (the default: every status), counts exact; a triage change shows in a list read before it', async () => {
    const [a, b, c] = [await reportError(t, 1), await reportError(t, 2), await reportError(t, 3)];
    const before = await call(t, 'GET', `${ERRORS}.json?status=unresolved`);
    assert.deepEqual([ids(before), before.headers['x-total']], [[c, b, a], '3']);
    await call(t, 'PUT', `${ERRORS}/${b}/triage.json`, { status: 'ignored' });
    const afterChange = await call(t, 'GET', `${ERRORS}.json?status=unresolved`);
    assert.deepEqual([ids(afterChange), afterChange.headers['x-total']], [[c, a], '2']);
    const ignored = await call(t, 'GET', `${ERRORS}.json?status=ignored&error_class=RangeError`);
    assert.deepEqual([ids(ignored), ignored.headers['x-total']], [[b], '1']);
    const all = await call(t, 'GET', `${ERRORS}.json`);
    assert.deepEqual([ids(all), all.headers['x-total']], [[c, b, a], '3']);
    assert.equal((await call(t, 'GET', `${ERRORS}.json?status=fixed`)).body, '{"errors":{"status":["must be one of unresolved, resolved, ignored, snoozed"]}}');

    // Another process's cached page follows a change made here (docs/architecture.md#how-cached-pages-stay-right).
    const other = await t.secondProcess();
    try {
      const readThere = async () => ids(await other.app.inject({ url: `${ERRORS}.json?status=unresolved`, headers: { authorization: t.adminAuth } }));
      assert.deepEqual(await readThere(), [c, a]);
      assert.deepEqual(await readThere(), [c, a]);
      await call(t, 'PUT', `${ERRORS}/${c}/triage.json`, { status: 'resolved' });
      await eventually(async () => assert.deepEqual(await readThere(), [a], 'the other process lists the change'));
    } finally {
      await other.close();
    }
  });

  it('bulk: by ids or by the list\'s filters, one request, {"changed": N}', async () => {
    const made = [];
    for (let i = 1; i <= 5; i++) made.push(await reportError(t, i, { host: i <= 2 ? 'hv-1' : 'hv-2' }));
    const before = await call(t, 'GET', `${ERRORS}.json?status=resolved`);
    assert.equal(before.headers['x-total'], '0');
    const byIds = await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'resolved' }, ids: [made[0], made[1], made[2], 999] });
    assert.deepEqual([byIds.statusCode, byIds.body], [200, '{"changed":3}']);
    const afterBulk = await call(t, 'GET', `${ERRORS}.json?status=resolved`);
    assert.deepEqual([ids(afterBulk), afterBulk.headers['x-total']], [[made[2], made[1], made[0]], '3']);
    // Already resolved: not changed again.
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'resolved' }, ids: made.slice(0, 3) })).body, '{"changed":0}');
    const byFilter = await call(t, 'PUT', `${ERRORS}/triage.xml?host=hv-2&status=resolved`, '<bulk><triage><status>ignored</status><assignee_id>1</assignee_id></triage></bulk>', t.adminAuth, 'application/xml');
    assert.equal(byFilter.body, '<?xml version="1.0" encoding="UTF-8"?>\n<changed type="integer">1</changed>\n');
    assert.deepEqual(ids(await call(t, 'GET', `${ERRORS}.json?status=ignored&assignee=me`)), [made[2]]);
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'resolved' } })).body, '{"errors":{"all":["must be true to change every error (or give ids or a filter)"]}}');
    const xmlIds = await call(t, 'PUT', `${ERRORS}/triage.xml`, '<bulk><triage><status>snoozed</status><snooze_occurrences>9</snooze_occurrences></triage><ids type="array"><id>4</id><id>5</id></ids></bulk>', t.adminAuth, 'application/xml');
    assert.equal(xmlIds.body, '<?xml version="1.0" encoding="UTF-8"?>\n<changed type="integer">2</changed>\n');
    assert.deepEqual(ids(await call(t, 'GET', `${ERRORS}.json?status=snoozed`)), [made[4], made[3]]);
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json?all=true`, { triage: { status: 'resolved' } })).body, '{"changed":3}');
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json?host=hv-1`, { triage: { status: 'resolved' }, ids: [1] })).body, '{"errors":{"ids":["give ids or filters in the query, not both"]}}');
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json?all=true`, { triage: { status: 'resolved' } }, t.aliceAuth)).statusCode, 403);
    assert.deepEqual((await activityOf(t, made[2] as number)), [
      'first_seen:-:{}',
      `status:${t.admin.id}:{"from":"unresolved","to":"resolved"}`,
      `status:${t.admin.id}:{"from":"resolved","to":"ignored"}`,
      `assign:${t.admin.id}:{"from":null,"to":1}`,
      `status:${t.admin.id}:{"from":"ignored","to":"resolved"}`,
    ]);
  });
});

describe('bulk triage at 100,000 errors', { timeout: 600_000 }, () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('one request changes every error by filter, then 100,000 ids at once, exactly, with their activity', async () => {
    const n = 100_000;
    // Seeded 1,000 a statement (the triggers give each its triage row, as a report would).
    for (let from = 1; from <= n; from += 1_000) {
      const series = Array.from({ length: 1_000 }, (_, i) => from + i);
      await t.database.db.insertInto('infrastructure_errors').values(series.map((i) => ({
        fingerprint: `fp-${i}`, error_class: `Class${i % 50}`, message: `message ${i}`, backtrace: '', counter: 1, reported: 0,
        created_at: '2026-11-20T09:00:00.000Z', updated_at: '2026-11-20T09:00:00.000Z',
      }))).execute();
    }
    const resolved = await call(t, 'PUT', `${ERRORS}/triage.json?status=unresolved`, { triage: { status: 'resolved' } });
    assert.equal(resolved.body, `{"changed":${n}}`);
    const listed = await call(t, 'GET', `${ERRORS}.json?status=resolved&per_page=1`);
    assert.equal(listed.headers['x-total'], String(n));
    const ignored = await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'ignored', assignee_id: t.admin.id }, ids: Array.from({ length: n }, (_, i) => i + 1) });
    assert.equal(ignored.body, `{"changed":${n}}`);
    assert.deepEqual([(await call(t, 'GET', `${ERRORS}.json?status=ignored&assignee=me&per_page=1`)).headers['x-total'], (await call(t, 'GET', `${ERRORS}.json?status=resolved`)).headers['x-total']], [String(n), '0']);
    const activity = await t.database.db.selectFrom('error_activity').select(['action', (eb) => eb.fn.countAll<number | string>().as('rows')]).groupBy('action').orderBy('action').execute();
    assert.deepEqual(activity.map((row) => `${row.action}:${Number(row.rows)}`), [`assign:${n}`, `status:${2 * n}`]);
  });
});

describe('regressions and alerts', { timeout: 600_000 }, () => {
  // Alerts go to a receiver that is not there, tried rarely: the outbox's rows are what is checked.
  const env = { CMI_ALERT_WEBHOOK_URL: 'http://127.0.0.1:8/alerts', CMI_WEBHOOK_SECRET: 'alert-secret-0123456789', CMI_WEBHOOK_POLL_INTERVAL: '3600000', CMI_ALERT_SPIKE_THRESHOLD: '5', CMI_ALERT_SPIKE_WINDOW: '60' };
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp(env);
  });
  afterEach(() => t.close());
  const alerts = async () => (await t.database.db.selectFrom('webhook_deliveries').select(['kind', 'error_id', 'body']).orderBy('id').execute());

  it('200 concurrent occurrences of a resolved error, in two processes, reopen it once and queue one regression alert', async () => {
    const id = await reportError(t, 1);
    await call(t, 'PUT', `${ERRORS}/${id}/triage.json`, { status: 'resolved' });
    t.time.advance(120);
    const other = await t.secondProcess();
    try {
      const send = (i: number) => (i % 2 === 0 ? t.app : other.app).inject({
        method: 'POST', url: `${ERRORS}.json`, payload: JSON.stringify(fault(1)), headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      });
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => send(i)));
      assert.deepEqual([...new Set(answers.map((res) => res.statusCode))], [200]);
    } finally {
      await other.close();
    }
    const triage = JSON.parse((await call(t, 'GET', `${ERRORS}/${id}/triage.json`)).body) as { triage: Record<string, unknown> };
    assert.deepEqual(triage.triage, { status: 'unresolved', assignee_id: null, snoozed_until: null, snooze_occurrences: null, resolved_at: null, resolved_by_id: null, regressed_at: '2026-11-20T10:02:00+00:00', resolved_in_release: null, updated_at: '2026-11-20T10:02:00+00:00' });
    const kinds = (await alerts()).map((row) => `${row.kind}:${row.error_id}`);
    assert.deepEqual(kinds.filter((kind) => kind.startsWith('regression')), [`regression:${id}`]);
    const body = JSON.parse((await alerts()).find((row) => row.kind === 'regression')!.body) as { event: string; text: string };
    assert.equal(body.event, 'regression');
    // The counter as the batch that reopened it left it (the first batch of either process).
    assert.match(body.text, new RegExp(`^\\[cmi\\] Error #${id} regressed \\(it was resolved; \\d+ occurrences in all\\): RangeError: pool exhausted 1 http://127\\.0\\.0\\.1:3000${ERRORS}/${id}\\.json$`));
    assert.deepEqual((await activityOf(t, id)).filter((entry) => entry.startsWith('regression')), ['regression:-:{"from":"resolved","to":"unresolved"}']);
    const row = await t.database.db.selectFrom('infrastructure_errors').select('counter').where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(Number(row.counter), 201);
  });

  it('an ignored or snoozed error is counted but sends no spike alert; unresolved again, it does', async () => {
    const ignored = await reportError(t, 1);
    const snoozed = await reportError(t, 2);
    await call(t, 'PUT', `${ERRORS}/${ignored}/triage.json`, { status: 'ignored' });
    await call(t, 'PUT', `${ERRORS}/${snoozed}/triage.json`, { status: 'snoozed', snoozed_until: '2026-11-21T10:00:00Z' });
    for (let i = 0; i < 10; i++) {
      await reportError(t, 1);
      await reportError(t, 2);
    }
    assert.deepEqual((await alerts()).map((row) => `${row.kind}:${row.error_id}`), [`new:${ignored}`, `new:${snoozed}`]);
    const counted = await call(t, 'GET', `${ERRORS}/${ignored}.json`);
    assert.equal((JSON.parse(counted.body) as { infrastructure_error: { counter: number } }).infrastructure_error.counter, 11);
    // A new window, unresolved: the spike alerts.
    t.time.advance(120);
    await call(t, 'PUT', `${ERRORS}/${ignored}/triage.json`, { status: 'unresolved' });
    for (let i = 0; i < 6; i++) await reportError(t, 1);
    assert.deepEqual((await alerts()).map((row) => `${row.kind}:${row.error_id}`), [`new:${ignored}`, `new:${snoozed}`, `spike:${ignored}`]);
  });
});

describe('cmi errors resolve|ignore|snooze|assign|note|notes|activity', { timeout: 600_000 }, () => {
  let t: TestApp;
  let home: string;
  let env: Record<string, string>;
  before(async () => {
    t = await createTestApp();
    home = mkdtempSync(join(tmpdir(), 'cmi-triage-cli-'));
    env = {
      XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: `http://127.0.0.1:${await listenLocally(t.app)}`, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password,
      CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}`,
    };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });
  const cmi = async (...args: string[]) => {
    const res = await runCmi(args, env);
    return `${res.code}|${res.stdout}${res.stderr}`;
  };

  it('changes one error, several by id, or what the filters of ls select; notes and activity', async () => {
    const [a, b, c] = [await reportError(t, 1, { host: 'hv-1' }), await reportError(t, 2, { host: 'hv-1' }), await reportError(t, 3, { host: 'hv-2' })];
    assert.equal(await cmi('errors', 'resolve', String(a)), `0|Infrastructure error ${a} resolved: resolved\n`);
    assert.equal(await cmi('errors', 'ignore', '--host', 'hv-1', '--status', 'unresolved'), '0|1 infrastructure error ignored\n');
    assert.equal(await cmi('errors', 'snooze', String(b), String(c), '--occurrences', '5'), '0|2 infrastructure errors snoozed\n');
    assert.equal(await cmi('errors', 'assign', String(c), '--to', String(t.admin.id)), `0|Infrastructure error ${c} assigned: snoozed, assigned to ${t.admin.login}\n`);
    assert.equal(await cmi('errors', 'ls', '--status', 'snoozed', '--assignee', 'me', '--json'), `0|${(await call(t, 'GET', `${ERRORS}.json?status=snoozed&assignee=me`)).body}\n`);
    assert.equal(await cmi('errors', 'note', String(c), 'DNS', 'on', 'hv-2'), `0|Note 1 added to infrastructure error ${c}\n`);
    assert.equal(await cmi('errors', 'notes', String(c)), `0|ID  AT                         AUTHOR  NOTE\n1   ${AT}  ${t.admin.login}   DNS on hv-2\n1 of 1 notes\n`);
    assert.equal(await cmi('errors', 'activity', String(c)), [
      '0|AT                         ACTOR  ACTION      DETAILS',
      `${AT}  -      first_seen  {}`,
      `${AT}  ${t.admin.login}  status      {"from":"unresolved","to":"snoozed","snoozed_until":null,"snooze_occurrences":5}`,
      `${AT}  ${t.admin.login}  assign      {"from":null,"to":${t.admin.id}}`,
      `${AT}  ${t.admin.login}  note        {"note_id":1}`,
      '4 entries',
      '',
    ].join('\n'));
    assert.equal(await cmi('errors', 'note', String(c), '--rm', '1'), `0|Note 1 deleted from infrastructure error ${c}\n`);
    assert.equal(await cmi('errors', 'resolve'), '2|cmi: give error ids, or filters (--status unresolved for every unresolved error, --status all for every error)\n');
    assert.equal(await cmi('errors', 'snooze', String(a)), '2|cmi: give --until, --for or --occurrences\n');
    assert.equal(await cmi('errors', 'snooze', String(a), '--until', '2020-01-01T00:00:00Z'), '1|cmi: snoozed_until must be in the future\n');
  });

  it('ls lists the unresolved errors unless --status says otherwise (all: every status); the bulk verbs take --status all too', async () => {
    await call(t, 'DELETE', `${ERRORS}.json?all=true`);
    const [a, b, c] = [await reportError(t, 'x1', { host: 'hv-9' }), await reportError(t, 'x2', { host: 'hv-9' }), await reportError(t, 'x3', { host: 'hv-8' })];
    assert.equal((await call(t, 'PUT', `${ERRORS}/triage.json`, { triage: { status: 'resolved' }, ids: [a] })).statusCode, 200);
    const listed = async (...flags: string[]) => (JSON.parse((await cmi('errors', 'ls', '--json', ...flags)).slice(2)) as Array<{ infrastructure_error: { id: number } }>).map((e) => e.infrastructure_error.id);
    assert.deepEqual(await listed(), [c, b]);
    assert.deepEqual(await listed('--status', 'all'), [c, b, a]);
    assert.deepEqual(await listed('--status', 'resolved'), [a]);
    assert.equal(await cmi('errors', 'ignore', '--status', 'all', '--host', 'hv-9'), '0|2 infrastructure errors ignored\n');
    assert.equal(await cmi('errors', 'reopen', '--status', 'all'), '0|2 infrastructure errors reopened\n');
    assert.equal(await cmi('errors', 'assign', String(a), '--status', 'all', '--to', 'none'), '2|cmi: give error ids or filters, not both\n');
    assert.match(await cmi('errors', 'resolve', '--reported', '--unreported'), /^2\|error: option '--reported' cannot be used with option '--unreported'\n/);
    assert.deepEqual(await listed(), [c, b, a]);
  });
});
