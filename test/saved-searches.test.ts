import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { ERRORS, forbiddenJson, JSON_TYPE, report, XML_DECLARATION } from './support/error-reports.js';

// Saved searches (docs/search.md#saved-searches) over HTTP: create, list, show, edit, delete; who sees
// which (own, shared); the errors list's saved= by id and by name, narrowed by q, its kept page
// following an edit; the refusals; audit rows.

const SAVED = '/sysadmin_tools/infrastructure/saved_searches';

describe('saved searches', () => {
  let t: TestApp;
  let tomAuth = '';
  let tomId = 0;
  const ids: Record<string, number> = {};
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, authorization = t.adminAuth) =>
    t.app.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  const listed = async (url: string, authorization = t.adminAuth) => {
    const res = await call('GET', url, undefined, authorization);
    assert.equal(res.statusCode, 200, res.body);
    const names = Object.fromEntries(Object.entries(ids).map(([name, id]) => [id, name]));
    return (JSON.parse(res.body) as Array<{ infrastructure_error: { id: number } }>).map((item) => names[item.infrastructure_error.id] ?? '?');
  };

  before(async () => {
    t = await createTestApp();
    t.time.set('2026-11-20T10:00:00.000Z');
    const [tom] = await t.addUsers(1, 'admin');
    tomId = tom!.id;
    tomAuth = t.basic(tom!.login, 'shared-password');
    for (const [name, fields] of [
      ['iscsi', { error_class: 'StorageError', message: 'iscsi login failed', host: 'hv-07', component: 'storage' }],
      ['nfs', { error_class: 'StorageTimeout', message: 'nfs not responding', host: 'hv-02', component: 'storage' }],
      ['dns', { error_class: 'Net::Timeout', message: 'dns timed out', host: 'hv-07', component: 'network' }],
    ] as const) {
      const res = await report(t, fields);
      ids[name] = (JSON.parse(res.body) as { infrastructure_error: { id: number } }).infrastructure_error.id;
    }
  });
  after(() => t?.close());

  it('saves a search, 201 with its Location, in JSON and XML, and lists it', async () => {
    const created = await call('POST', `${SAVED}.json`, { saved_search: { name: ' hv-07 storage ', query: 'host:hv-07 component:storage' } });
    assert.equal(created.statusCode, 201, created.body);
    assert.equal(created.headers['content-type'], JSON_TYPE);
    const id = (JSON.parse(created.body) as { saved_search: { id: number } }).saved_search.id;
    assert.equal(created.headers.location, `${SAVED}/${id}.json`);
    assert.equal(created.body, JSON.stringify({ saved_search: { id, name: 'hv-07 storage', query: 'host:hv-07 component:storage', shared: false, user_id: t.admin.id } }));
    const xml = await call('GET', `${SAVED}/${id}.xml`);
    assert.equal(xml.body, `${XML_DECLARATION}<saved_search>
  <id type="integer">${id}</id>
  <name>hv-07 storage</name>
  <query>host:hv-07 component:storage</query>
  <shared type="boolean">false</shared>
  <user_id type="integer">${t.admin.id}</user_id>
</saved_search>
`);
    const list = await call('GET', `${SAVED}.json`);
    assert.deepEqual([list.headers['x-total'], JSON.parse(list.body)], ['1', [{ saved_search: { id, name: 'hv-07 storage', query: 'host:hv-07 component:storage', shared: false, user_id: t.admin.id } }]]);
    const row = await t.database.db.selectFrom('saved_searches').select(['user_id', 'name', 'query', 'shared']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { user_id: t.admin.id, name: 'hv-07 storage', query: 'host:hv-07 component:storage', shared: 0 });
  });

  it('runs on the errors list as saved= by id or by name, narrowed by a q beside it, and follows an edit', async () => {
    const [{ id }] = (await t.database.db.selectFrom('saved_searches').select('id').execute()) as [{ id: number }];
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${id}`), ['iscsi']);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${encodeURIComponent('hv-07 storage')}`), ['iscsi']);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${id}&q=nfs`), []);
    // The same URL, after the search changed: the kept page is not answered.
    const edited = await call('PUT', `${SAVED}/${id}.json`, { saved_search: { query: 'component:storage' } });
    assert.deepEqual([edited.statusCode, edited.body], [204, '']);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${id}`), ['nfs', 'iscsi']);
    const page = await call('GET', `${ERRORS}.json?saved=${id}&per_page=1`);
    assert.match(String(page.headers.link), new RegExp(`saved=${id}`));
    for (const saved of ['999999', 'nothing like it']) {
      const refused = await call('GET', `${ERRORS}.json?saved=${encodeURIComponent(saved)}`);
      assert.deepEqual([refused.statusCode, refused.body], [422, '{"errors":{"saved":["must be the id or name of a saved search you can see"]}}']);
    }
  });

  it('shows another user only the shared ones, and only the owner changes or deletes one', async () => {
    const [{ id }] = (await t.database.db.selectFrom('saved_searches').select('id').execute()) as [{ id: number }];
    assert.equal((await call('GET', `${SAVED}/${id}.json`, undefined, tomAuth)).statusCode, 404);
    assert.equal((await call('GET', `${ERRORS}.json?saved=${id}`, undefined, tomAuth)).statusCode, 422);
    assert.equal((await call('GET', `${SAVED}.json`, undefined, tomAuth)).headers['x-total'], '0');
    assert.equal((await call('PUT', `${SAVED}/${id}.json`, { saved_search: { shared: true } })).statusCode, 204);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${id}`, tomAuth), ['nfs', 'iscsi']);
    const seen = await call('GET', `${SAVED}.json`, undefined, tomAuth);
    assert.deepEqual(JSON.parse(seen.body), [{ saved_search: { id, name: 'hv-07 storage', query: 'component:storage', shared: true, user_id: t.admin.id } }]);
    for (const method of ['PUT', 'DELETE'] as const) {
      const refused = await call(method, `${SAVED}/${id}.json`, method === 'PUT' ? { saved_search: { name: 'mine now' } } : undefined, tomAuth);
      assert.deepEqual([refused.statusCode, refused.body], [403, '{"errors":{"base":["Only its owner changes or deletes a saved search"]}}']);
    }
    // Tom's own search of the same name comes first for Tom, by name.
    const toms = await call('POST', `${SAVED}.json`, { saved_search: { name: 'hv-07 storage', query: 'host:hv-07' } }, tomAuth);
    assert.equal(toms.statusCode, 201, toms.body);
    assert.equal((JSON.parse(toms.body) as { saved_search: { user_id: number } }).saved_search.user_id, tomId);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${encodeURIComponent('hv-07 storage')}`, tomAuth), ['dns', 'iscsi']);
    assert.deepEqual(await listed(`${ERRORS}.json?saved=${encodeURIComponent('hv-07 storage')}`), ['nfs', 'iscsi']);
    const stranger = await call('GET', `${SAVED}.json`, undefined, t.aliceAuth);
    assert.deepEqual([stranger.statusCode, stranger.body], [403, forbiddenJson('infrastructure_errors.read')]);
  });

  it('refuses a bad field, a query the list cannot run and a name taken, naming each', async () => {
    for (const [payload, errors] of [
      [{ saved_search: { name: '', query: 'host:hv-07' } }, { name: ["can't be blank"] }],
      [{ saved_search: { name: 'x'.repeat(101), query: 'host:hv-07' } }, { name: ['is too long (maximum is 100 characters)'] }],
      [{ saved_search: { name: 'bad', query: 'rack:7' } }, { query: ['rack: is not a key of the search (keys: host, component, class, message, release, environment, level, status, is, assigned, reported, counter, first_seen, last_seen, has, tag.<name>) at position 1'] }],
      [{ saved_search: { name: 'bad', query: 'host:hv-07', shared: 'maybe', owner: 1 } }, { owner: ['is not a field of a saved search'], shared: ['must be true or false'] }],
      [{ saved_search: { name: 'hv-07 storage', query: 'host:hv-07' } }, { name: ['has already been taken'] }],
    ] as const) {
      const res = await call('POST', `${SAVED}.json`, payload);
      assert.deepEqual([res.statusCode, JSON.parse(res.body)], [422, { errors }], JSON.stringify(payload));
    }
    assert.equal(await t.database.db.selectFrom('saved_searches').select('id').where('name', '=', 'bad').executeTakeFirst(), undefined);
  });

  it('deletes its own (204, then 404) and records create, update and delete in the audit trail', async () => {
    const [{ id }] = (await t.database.db.selectFrom('saved_searches').select('id').where('user_id', '=', t.admin.id).execute()) as [{ id: number }];
    assert.deepEqual([(await call('DELETE', `${SAVED}/${id}.json`)).statusCode, (await call('DELETE', `${SAVED}/${id}.json`)).statusCode], [204, 404]);
    const audited = await t.database.db.selectFrom('audit_events').select(['actor_id', 'action', 'target_id', 'changes']).where('target_type', '=', 'saved_search').where('target_id', '=', id).orderBy('id').execute();
    assert.deepEqual(audited.map((row) => [row.actor_id, row.action, row.changes]), [
      [t.admin.id, 'saved_search.create', '{"name":"hv-07 storage","query":"host:hv-07 component:storage","shared":false}'],
      [t.admin.id, 'saved_search.update', '{"query":["host:hv-07 component:storage","component:storage"]}'],
      [t.admin.id, 'saved_search.update', '{"shared":[false,true]}'],
      [t.admin.id, 'saved_search.delete', '{"name":"hv-07 storage"}'],
    ]);
  });
});
