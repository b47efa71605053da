import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { PERMISSIONS } from '../src/roles/permissions.js';
import { ALICE, createTestApp, type TestApp } from './support/app.js';
import { ERRORS, forbiddenJson, JSON_TYPE, NOT_FOUND_JSON, report, XML_DECLARATION, XML_TYPE } from './support/error-reports.js';

const CHANGES = '/sysadmin_tools/infrastructure/changes';
const AT = '2026-11-20T10:00:00+00:00';

function call(t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, auth: string, body?: unknown, contentType = 'application/json'): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { authorization: auth };
  if (body !== undefined) headers['content-type'] = contentType;
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return t.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) });
}

interface Wire { id: number; kind: string; title: string; release: string | null; started_at: string; ended_at: string | null; hosts: string[]; components: string[]; created_by: number | null }

const changeJson = (c: Wire) => JSON.stringify({ change: c });
const changeXml = (c: Wire, indent = '') => [
  '<change>',
  `  <id type="integer">${c.id}</id>`,
  `  <kind>${c.kind}</kind>`,
  `  <title>${c.title}</title>`,
  c.release === null ? '  <release nil="true"/>' : `  <release>${c.release}</release>`,
  `  <started_at type="datetime">${c.started_at}</started_at>`,
  c.ended_at === null ? '  <ended_at nil="true"/>' : `  <ended_at type="datetime">${c.ended_at}</ended_at>`,
  `  <hosts>${JSON.stringify(c.hosts)}</hosts>`,
  `  <components>${JSON.stringify(c.components)}</components>`,
  c.created_by === null ? '  <created_by nil="true"/>' : `  <created_by type="integer">${c.created_by}</created_by>`,
  '</change>',
].map((line) => `${indent}${line}\n`).join('');

const rows = async (t: TestApp) => (await t.database.db.selectFrom('changes').selectAll().orderBy('id').execute())
  .map((row) => [Number(row.id), row.kind, row.title, row.release, row.started_at, row.ended_at, row.hosts, row.components, row.created_by === null ? null : Number(row.created_by)]);

const auditRows = async (t: TestApp) => (await t.database.db.selectFrom('audit_events').select(['actor_login', 'credential', 'action', 'target_type', 'target_id', 'changes'])
  .where('target_type', '=', 'change').orderBy('id').execute()).map((row) => [row.actor_login, row.credential, row.action, row.target_type, Number(row.target_id), row.changes]);

/** Gives alice a role of exactly these permissions (and her own account's), answering its id. */
async function giveAlice(t: TestApp, ...identifiers: string[]): Promise<void> {
  const ids = PERMISSIONS.filter(([, identifier]) => identifier === 'users.read.own' || identifiers.includes(identifier)).map(([id]) => id);
  const made = await call(t, 'POST', '/roles.json', t.adminAuth, { role: { label: `r ${identifiers.join(' ')}`, permission_ids: ids } });
  assert.equal(made.statusCode, 201, made.body);
  const role = made.json<{ role: { id: number } }>().role.id;
  assert.equal((await call(t, 'PUT', `/users/${t.alice.id}.json`, t.adminAuth, { user: { role_ids: [role] } })).statusCode, 204);
}

describe('/sysadmin_tools/infrastructure/changes', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  it('records a change with its defaults and every field, typed exactly, in JSON and XML, and stores it', async () => {
    const made = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { change: { kind: 'upgrade', title: 'upgrade libvirt 10.1' } });
    assert.equal(made.statusCode, 201);
    assert.equal(made.headers['content-type'], JSON_TYPE);
    assert.equal(made.headers.location, `${CHANGES}/1.json`);
    const first: Wire = { id: 1, kind: 'upgrade', title: 'upgrade libvirt 10.1', release: null, started_at: AT, ended_at: null, hosts: [], components: [], created_by: t.admin.id };
    assert.equal(made.body, changeJson(first));

    // Unwrapped, every field; the lists trimmed and each name once; any offset read.
    const full = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, {
      kind: 'deploy', title: ' nova 29.1 ', release: 'nova@29.1.0', started_at: '2026-11-20T11:00:00+01:00', ended_at: '20261120T101500Z',
      hosts: ['hv-01', ' hv-02', 'hv-01'], components: 'nova-compute,libvirt',
    });
    assert.equal(full.statusCode, 201);
    const second: Wire = { id: 2, kind: 'deploy', title: 'nova 29.1', release: 'nova@29.1.0', started_at: AT, ended_at: '2026-11-20T10:15:00+00:00', hosts: ['hv-01', 'hv-02'], components: ['nova-compute', 'libvirt'], created_by: t.admin.id };
    assert.equal(full.body, changeJson(second));

    // XML in (lists as items, an empty element the empty list) and out (the lists as their JSON text).
    const xmlBody = '<change><kind>maintenance</kind><title>rack &amp; power</title><hosts type="array"><item>hv-03</item></hosts><components/><ended_at nil="true"/></change>';
    const xml = await call(t, 'POST', `${CHANGES}.xml`, t.adminAuth, xmlBody, 'application/xml');
    assert.equal(xml.statusCode, 201);
    assert.equal(xml.headers['content-type'], XML_TYPE);
    assert.equal(xml.headers.location, `${CHANGES}/3.xml`);
    const third: Wire = { id: 3, kind: 'maintenance', title: 'rack &amp; power', release: null, started_at: AT, ended_at: null, hosts: ['hv-03'], components: [], created_by: t.admin.id };
    assert.equal(xml.body, `${XML_DECLARATION}${changeXml(third)}`);
    assert.equal((await call(t, 'GET', `${CHANGES}/2.xml`, t.adminAuth)).body, `${XML_DECLARATION}${changeXml(second)}`);
    assert.equal((await call(t, 'GET', `${CHANGES}/1.json`, t.adminAuth)).body, changeJson(first));

    assert.deepEqual(await rows(t), [
      [1, 'upgrade', 'upgrade libvirt 10.1', null, '2026-11-20T10:00:00.000Z', null, '[]', '[]', t.admin.id],
      [2, 'deploy', 'nova 29.1', 'nova@29.1.0', '2026-11-20T10:00:00.000Z', '2026-11-20T10:15:00.000Z', '["hv-01","hv-02"]', '["nova-compute","libvirt"]', t.admin.id],
      [3, 'maintenance', 'rack & power', null, '2026-11-20T10:00:00.000Z', null, '["hv-03"]', '[]', t.admin.id],
    ]);
  });

  it('lists changes paginated like users, edits wrapped or not (JSON or XML), deletes, and audits each', async () => {
    for (const title of ['A', 'B', 'C']) await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { change: { kind: 'config', title } });
    const page = await call(t, 'GET', `${CHANGES}.json?per_page=2&page=2`, t.adminAuth);
    assert.deepEqual([page.statusCode, page.headers['x-total'], page.headers['x-limit'], page.headers['x-page']], [200, '3', '2', '2']);
    assert.equal(page.headers.link, `<${CHANGES}.json?page=1&per_page=2>; rel="first", <${CHANGES}.json?page=1&per_page=2>; rel="prev", <${CHANGES}.json?page=2&per_page=2>; rel="last"`);
    const c: Wire = { id: 3, kind: 'config', title: 'C', release: null, started_at: AT, ended_at: null, hosts: [], components: [], created_by: t.admin.id };
    assert.equal(page.body, `[${changeJson(c)}]`);
    const xmlPage = await call(t, 'GET', `${CHANGES}.xml/page/2/per_page/2`, t.adminAuth);
    assert.equal(xmlPage.body, `${XML_DECLARATION}<changes type="array">\n${changeXml(c, '  ')}</changes>\n`);
    assert.equal((await call(t, 'GET', `${CHANGES}.xml?page=9`, t.adminAuth)).body, `${XML_DECLARATION}<changes type="array"/>\n`);

    // The Go SDK's edit: unwrapped; the pipeline ends the change.
    t.time.advance(600);
    assert.equal((await call(t, 'PUT', `${CHANGES}/1.json`, t.adminAuth, { ended_at: '2026-11-20T10:10:00Z', hosts: ['hv-01'] })).statusCode, 204);
    // The PHP wrapper's, in XML: a nil release and empty components.
    const xml = '<change><title>A2</title><release>r1</release></change>';
    assert.equal((await call(t, 'PUT', `${CHANGES}/1.xml`, t.adminAuth, xml, 'application/xml')).statusCode, 204);
    const one = await call(t, 'GET', `${CHANGES}/1.json`, t.adminAuth);
    assert.equal(one.body, changeJson({ id: 1, kind: 'config', title: 'A2', release: 'r1', started_at: AT, ended_at: '2026-11-20T10:10:00+00:00', hosts: ['hv-01'], components: [], created_by: t.admin.id }));
    assert.equal((await call(t, 'PUT', `${CHANGES}/1.json`, t.adminAuth, { release: null, hosts: [] })).statusCode, 204);
    assert.match((await call(t, 'GET', `${CHANGES}/1.json`, t.adminAuth)).body, /"release":null,.*"hosts":\[\],/);
    const ended = await call(t, 'PUT', `${CHANGES}/1.json`, t.adminAuth, { started_at: '2026-11-20T10:20:00Z' });
    assert.deepEqual([ended.statusCode, ended.body], [422, '{"errors":{"ended_at":["must not be before started_at"]}}']);

    assert.equal((await call(t, 'DELETE', `${CHANGES}/1.json`, t.adminAuth)).statusCode, 204);
    const gone = await call(t, 'GET', `${CHANGES}/1.json`, t.adminAuth);
    assert.deepEqual([gone.statusCode, gone.body], [404, NOT_FOUND_JSON]);
    assert.equal((await call(t, 'DELETE', `${CHANGES}/1.json`, t.adminAuth)).statusCode, 404);
    assert.equal((await call(t, 'PUT', `${CHANGES}/1.json`, t.adminAuth, { title: 'x' })).statusCode, 404);
    assert.equal((await call(t, 'GET', `${CHANGES}/x.json`, t.adminAuth)).statusCode, 404);
    assert.deepEqual((await rows(t)).map(([id]) => id), [2, 3]);

    const created = (id: number, title: string) => ['admin', 'password', 'change.create', 'change', id, JSON.stringify({ kind: 'config', title, release: null, started_at: '2026-11-20T10:00:00.000Z', ended_at: null, hosts: [], components: [], created_by: t.admin.id })];
    assert.deepEqual(await auditRows(t), [
      created(1, 'A'), created(2, 'B'), created(3, 'C'),
      ['admin', 'password', 'change.update', 'change', 1, '{"ended_at":[null,"2026-11-20T10:10:00.000Z"],"hosts":[[],["hv-01"]]}'],
      ['admin', 'password', 'change.update', 'change', 1, '{"title":["A","A2"],"release":[null,"r1"]}'],
      ['admin', 'password', 'change.update', 'change', 1, '{"release":["r1",null],"hosts":[["hv-01"],[]]}'],
      ['admin', 'password', 'change.delete', 'change', 1, '{"kind":"config","title":"A2"}'],
    ]);
  });

  it('names every bad field in one 422, within the limits of docs/limits.md, and stores nothing', async () => {
    const bad = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, {
      change: { kind: 'two words', title: ' ', release: 5, started_at: 'yesterday', ended_at: 3, hosts: ['hv-01', ''], components: ['x'.repeat(256)] },
    });
    assert.equal(bad.statusCode, 422);
    assert.equal(bad.body, JSON.stringify({ errors: {
      kind: ['must be one word (letters, digits, "_", "-", "."), such as deploy, upgrade, maintenance or config'],
      title: ["can't be blank"],
      release: ['must be a string'],
      started_at: ['must be a datetime such as 2026-11-20T10:00:00+00:00'],
      ended_at: ['must be a datetime such as 2026-11-20T10:00:00+00:00'],
      hosts: ['must be a list of names (an empty list means all)'],
      components: ['must hold names of at most 255 characters'],
    } }));
    const missing = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { change: {} });
    assert.equal(missing.body, '{"errors":{"kind":["can\'t be blank"],"title":["can\'t be blank"]}}');
    const long = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, {
      kind: 'k'.repeat(65), title: 't'.repeat(256), release: 'r'.repeat(256), hosts: Array.from({ length: 101 }, (_, i) => `hv-${i}`), started_at: '2026-11-20T10:00:00Z', ended_at: '2026-11-20T09:59:59Z',
    });
    assert.equal(long.body, JSON.stringify({ errors: {
      kind: ['is too long (maximum is 64 characters)'], title: ['is too long (maximum is 255 characters)'], release: ['is too long (maximum is 255 characters)'],
      hosts: ['must hold at most 100 names'], ended_at: ['must not be before started_at'],
    } }));
    const nul = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { kind: 'deploy', title: 'a\u0000b', started_at: null });
    assert.equal(nul.body, '{"errors":{"title":["must not contain the NUL character (U+0000)"],"started_at":["must be a datetime such as 2026-11-20T10:00:00+00:00"]}}');
    // At the limits: accepted.
    const most = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { kind: 'k'.repeat(64), title: 't'.repeat(255), hosts: Array.from({ length: 100 }, (_, i) => `hv-${i}`), components: ['c'.repeat(255)] });
    assert.equal(most.statusCode, 201);
    assert.equal((await rows(t)).length, 1);
  });

  it('answers 403 without the permissions; changes.create alone (a CD pipeline\'s API key) records but reads nothing', async () => {
    await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { change: { kind: 'deploy', title: 'x' } });
    await report(t, { error_class: 'TypeError', message: 'boom', backtrace: "src/a.ts:1:in 'f'" });
    const cells = [
      ['GET', `${CHANGES}.json`, undefined, ['changes.read']], ['GET', `${CHANGES}/1.json`, undefined, ['changes.read']],
      ['POST', `${CHANGES}.json`, { change: { kind: 'deploy', title: 'y' } }, ['changes.manage', 'changes.create']],
      ['PUT', `${CHANGES}/1.json`, { title: 'y' }, ['changes.manage']], ['DELETE', `${CHANGES}/1.json`, undefined, ['changes.manage']],
      ['GET', `${ERRORS}/1/suspect_changes.json`, undefined, ['changes.read']],
    ] as const;
    for (const [method, url, body, needs] of cells) {
      const res = await call(t, method, url, t.aliceAuth, body);
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson(...needs)], `${method} ${url}`);
    }

    await giveAlice(t, 'changes.create');
    const made = await call(t, 'POST', `/users/${t.alice.id}/user_api_keys.json`, t.adminAuth, { user_api_key: { description: 'CD pipeline' } });
    assert.equal(made.statusCode, 201, made.body);
    const key = made.json<{ user_api_key: { api_key: string } }>().user_api_key.api_key;
    const pipeline = t.basic(ALICE.email, key);
    const recorded = await call(t, 'POST', `${CHANGES}.json`, pipeline, { change: { kind: 'deploy', title: 'nova 29.1', release: 'nova@29.1.0', hosts: ['hv-01'] } });
    assert.equal(recorded.statusCode, 201);
    assert.equal(recorded.body, changeJson({ id: 2, kind: 'deploy', title: 'nova 29.1', release: 'nova@29.1.0', started_at: AT, ended_at: null, hosts: ['hv-01'], components: [], created_by: t.alice.id }));
    for (const [method, url, body, needs] of cells.filter(([method]) => method !== 'POST')) {
      const res = await call(t, method, url, pipeline, body);
      assert.deepEqual([res.statusCode, res.body], [403, forbiddenJson(...needs)], `${method} ${url}`);
    }
    assert.deepEqual((await auditRows(t)).map(([login, credential, action, , id]) => [login, credential, action, id]), [['admin', 'password', 'change.create', 1], ['alice', 'api_key', 'change.create', 2]]);

    // changes.read without infrastructure_errors.read sees the changes, not an error's suspects.
    await giveAlice(t, 'changes.read');
    assert.equal((await call(t, 'GET', `${CHANGES}.json`, t.aliceAuth)).statusCode, 200);
    const suspects = await call(t, 'GET', `${ERRORS}/1/suspect_changes.json`, t.aliceAuth);
    assert.deepEqual([suspects.statusCode, suspects.body], [403, forbiddenJson('infrastructure_errors.read')]);
  });
});

describe('GET /sysadmin_tools/infrastructure/errors/:id/suspect_changes', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await createTestApp();
  });
  afterEach(() => t.close());

  const change = async (fields: Record<string, unknown>) => {
    const res = await call(t, 'POST', `${CHANGES}.json`, t.adminAuth, { change: { kind: 'deploy', ...fields } });
    assert.equal(res.statusCode, 201, res.body);
  };

  it('lists the changes in the error\'s scope (its hosts and its components) that ran when it was first seen or ended within the hour before', async () => {
    await change({ title: '1 on its host, ended 30 min before', hosts: ['hv-01'], started_at: '2026-11-20T09:00:00Z', ended_at: '2026-11-20T09:30:00Z' });
    await change({ title: '2 on another host', hosts: ['hv-02'], started_at: '2026-11-20T09:00:00Z', ended_at: '2026-11-20T09:30:00Z' });
    await change({ title: '3 its component, ended 61 min before', components: ['libvirt'], started_at: '2026-11-20T08:00:00Z', ended_at: '2026-11-20T08:59:00Z' });
    await change({ title: '4 everywhere, still running', kind: 'maintenance', started_at: '2026-11-20T09:50:00Z' });
    await change({ title: '5 started after', started_at: '2026-11-20T10:30:00Z' });
    await change({ title: '6 its host, another component', hosts: ['hv-01'], components: ['nova'], started_at: '2026-11-20T09:00:00Z' });
    await change({ title: '7 its host and component, ended exactly an hour before', hosts: ['hv-09', 'hv-01'], components: ['libvirt'], started_at: '2026-11-20T08:00:00Z', ended_at: '2026-11-20T09:00:00Z' });
    await change({ title: '8 running across it, ending after', components: ['libvirt'], started_at: '2026-11-20T09:59:00Z', ended_at: '2026-11-20T10:05:00Z' });

    t.time.set('2026-11-20T10:00:00.000Z');
    const first = await report(t, { error_class: 'LibvirtError', message: 'domain not found', backtrace: "virDomainLookup:1:in 'x'", host: 'hv-01', component: 'libvirt' });
    assert.equal(first.statusCode, 201, first.body);
    // Seen later elsewhere too: its scope grows, its first occurrence stays.
    t.time.set('2026-11-20T12:00:00.000Z');
    await report(t, { error_class: 'LibvirtError', message: 'domain not found', backtrace: "virDomainLookup:1:in 'x'", host: 'hv-02', component: 'nova' });

    const res = await call(t, 'GET', `${ERRORS}/1/suspect_changes.json`, t.adminAuth);
    assert.deepEqual([res.statusCode, res.headers['content-type'], res.headers['x-total'], res.headers['x-limit'], res.headers['x-page']], [200, JSON_TYPE, '6', '25', '1']);
    const titles = res.json<Array<{ change: Wire }>>().map(({ change: c }) => `${c.id} ${c.title.split(' ')[0]}`);
    // 2 and 6 are in scope now (the second report was on hv-02, in nova).
    assert.deepEqual(titles, ['1 1', '2 2', '4 4', '6 6', '7 7', '8 8']);
    const paged = await call(t, 'GET', `${ERRORS}/1/suspect_changes.xml?per_page=1&page=3`, t.adminAuth);
    assert.deepEqual([paged.statusCode, paged.headers['x-total'], paged.headers['x-limit'], paged.headers['x-page']], [200, '6', '1', '3']);
    assert.equal(paged.body, `${XML_DECLARATION}<changes type="array">\n${changeXml({ id: 4, kind: 'maintenance', title: '4 everywhere, still running', release: null, started_at: '2026-11-20T09:50:00+00:00', ended_at: null, hosts: [], components: [], created_by: t.admin.id }, '  ')}</changes>\n`);
  });

  it('matches no named host for an error reported without one; 404 for an unknown error', async () => {
    await change({ title: 'on a host', hosts: ['hv-01'], started_at: '2026-11-20T09:30:00Z' });
    await change({ title: 'everywhere', started_at: '2026-11-20T09:30:00Z' });
    await report(t, { error_class: 'TypeError', message: 'boom', backtrace: "src/a.ts:1:in 'f'" });
    const res = await call(t, 'GET', `${ERRORS}/1/suspect_changes.json`, t.adminAuth);
    assert.deepEqual([res.statusCode, res.headers['x-total']], [200, '1']);
    assert.equal(res.json<Array<{ change: Wire }>>()[0]?.change.title, 'everywhere');
    const unknown = await call(t, 'GET', `${ERRORS}/99/suspect_changes.json`, t.adminAuth);
    assert.deepEqual([unknown.statusCode, unknown.body], [404, NOT_FOUND_JSON]);
  });
});
