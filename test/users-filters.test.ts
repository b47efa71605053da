import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { eventually } from './support/eventually.js';

// GET /users.json's filters (docs/api.md#users-list-filters): q, status, role_id, user_group_id.

const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

describe('GET /users filters', () => {
  let t: TestApp;
  const ids: Record<string, number> = {};

  const get = (url: string, auth = t.adminAuth): Promise<LightMyRequestResponse> => t.app.inject({ url, headers: { authorization: auth } });
  /** The logins a JSON list answers, and its X-Total. */
  const logins = async (url: string, auth?: string): Promise<[string | undefined, string[]]> => {
    const res = await get(url, auth);
    assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
    return [res.headers['x-total'] as string | undefined, res.json<Array<{ user: { login: string } }>>().map(({ user }) => user.login)];
  };
  const refused = async (url: string, body: string) => {
    const res = await get(url);
    assert.deepEqual([res.statusCode, res.body], [422, body], url);
  };

  before(async () => {
    t = await createTestApp();
    const make = async (login: string, fields: Record<string, unknown>) => {
      const res = await t.app.inject({
        method: 'POST', url: '/users.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: JSON.stringify({ user: { login, email: `${login}@example.com`, password: 'a-password', ...fields } }),
      });
      assert.equal(res.statusCode, 201, res.body);
      ids[login] = res.json<{ user: { id: number } }>().user.id;
    };
    const group = await t.app.inject({ method: 'POST', url: '/user_groups.json', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: '{"user_group":{"label":"Staff"}}' });
    assert.equal(group.statusCode, 201);
    await make('elodie', { first_name: 'Élodie', last_name: 'Durand', user_group_id: 1 });
    await make('percent', { first_name: '50%_off', last_name: 'Sale', user_group_id: 1 });
    await make('plain', { first_name: '50xxoff', last_name: 'Back\\slash' });
    await make('boss', { first_name: 'Grace', last_name: 'Hopper', role: 'admin' });
    const suspended = await t.app.inject({ method: 'POST', url: `/users/${ids['plain']}/suspend.json`, headers: { authorization: t.adminAuth } });
    assert.equal(suspended.statusCode, 200);
  });
  after(() => t?.close());

  it('q matches login, email, first and last name as a substring, in any case, every letter folded', async () => {
    assert.deepEqual(await logins('/users.json?q=ALI'), ['1', ['alice']]);
    assert.deepEqual(await logins('/users.json?q=%C3%89LODIE'), ['1', ['elodie']]);
    assert.deepEqual(await logins('/users.json?q=%C3%A9lo'), ['1', ['elodie']]);
    assert.deepEqual(await logins('/users.json?q=hopper'), ['1', ['boss']]);
    assert.deepEqual(await logins('/users.json?q=example.com'), ['6', ['admin', 'alice', 'elodie', 'percent', 'plain', 'boss']]);
    assert.deepEqual(await logins('/users.json?q=nobody'), ['0', []]);
  });

  it('q takes % _ and \\ literally', async () => {
    assert.deepEqual(await logins('/users.json?q=50%25_'), ['1', ['percent']]);
    assert.deepEqual(await logins('/users.json?q=%25'), ['1', ['percent']]);
    assert.deepEqual(await logins('/users.json?q=_'), ['1', ['percent']]);
    assert.deepEqual(await logins('/users.json?q=k%5Cs'), ['1', ['plain']]);
  });

  it('status, role_id and user_group_id narrow the list; filters combine; X-Total counts what they keep', async () => {
    assert.deepEqual(await logins('/users.json?status=suspended'), ['1', ['plain']]);
    assert.deepEqual(await logins('/users.json?status=active'), ['5', ['admin', 'alice', 'elodie', 'percent', 'boss']]);
    assert.deepEqual(await logins('/users.json?status=deleted'), ['0', []]);
    assert.deepEqual(await logins('/users.json?role_id=1'), ['2', ['admin', 'boss']]);
    assert.deepEqual(await logins('/users.json?role_id=2'), ['4', ['alice', 'elodie', 'percent', 'plain']]);
    assert.deepEqual(await logins('/users.json?role_id=99'), ['0', []]);
    assert.deepEqual(await logins('/users.json?user_group_id=1'), ['2', ['elodie', 'percent']]);
    assert.deepEqual(await logins('/users.json?user_group_id=1&q=sale&status=active&role_id=2'), ['1', ['percent']]);
    assert.deepEqual(await logins('/users.json?user_group_id=1&status=suspended'), ['0', []]);
  });

  it('paginates the filtered set; Link headers keep the filters', async () => {
    const res = await get('/users.json/per_page/1?role_id=2&page=2');
    assert.deepEqual([res.statusCode, res.headers['x-total'], res.headers['x-limit'], res.headers['x-page']], [200, '4', '1', '2']);
    assert.equal(res.headers.link, '</users.json/per_page/1?role_id=2&page=1>; rel="first", </users.json/per_page/1?role_id=2&page=1>; rel="prev", </users.json/per_page/1?role_id=2&page=3>; rel="next", </users.json/per_page/1?role_id=2&page=4>; rel="last"');
    assert.deepEqual(res.json<Array<{ user: { login: string } }>>().map(({ user }) => user.login), ['elodie']);
    const past = await get('/users.xml?status=suspended&page=2');
    assert.deepEqual([past.statusCode, past.headers['x-total'], past.body], [200, '1', `${XML_DECLARATION}<users type="array"/>\n`]);
    const xml = await get('/users.xml?q=plain');
    assert.match(xml.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<users type="array">\n {2}<user>\n {4}<id type="integer">5<\/id>\n {4}<login>plain<\/login>\n[^]*<status>suspended<\/status>[^]*<\/user>\n<\/users>\n$/);
  });

  it('a user without users.read sees itself at most, filtered the same way', async () => {
    assert.deepEqual(await logins('/users.json?q=alice', t.aliceAuth), ['1', ['alice']]);
    assert.deepEqual(await logins('/users.json?q=elodie', t.aliceAuth), ['0', []]);
    assert.deepEqual(await logins('/users.json?status=suspended', t.aliceAuth), ['0', []]);
  });

  it('an unknown parameter or a value not understood is a 422 naming it, in the format asked for', async () => {
    await refused('/users.json?role=admin', '{"errors":{"role":["is not a parameter of this list"]}}');
    await refused('/users.json?status=gone', '{"errors":{"status":["must be one of active, suspended, deleted"]}}');
    await refused('/users.json?role_id=x&user_group_id=0', '{"errors":{"role_id":["must be an id"],"user_group_id":["must be an id"]}}');
    await refused('/users.json?q=', '{"errors":{"q":["must be 1 to 254 characters"]}}');
    await refused(`/users.json?q=${'a'.repeat(255)}`, '{"errors":{"q":["must be 1 to 254 characters"]}}');
    await refused('/users.json?q=a&q=b', '{"errors":{"q":["must be given only once"]}}');
    await refused('/users.json?role_id=99999999999', '{"errors":{"role_id":["must be an id"]}}');
    const xml = await get('/users.xml?status=gone');
    assert.deepEqual([xml.statusCode, xml.body], [422, `${XML_DECLARATION}<errors>\n  <error>Status must be one of active, suspended, deleted</error>\n</errors>\n`]);
    // A bare `?`, as OnApp clients send, is no parameter.
    assert.equal((await get('/users.json?')).statusCode, 200);
  });

  it('a filtered page is answered anew once a change in any process could alter it', async () => {
    assert.deepEqual(await logins('/users.json?q=durand'), ['1', ['elodie']]);
    assert.deepEqual(await logins('/users.json?q=durand'), ['1', ['elodie']]);
    const other = await t.secondProcess();
    try {
      const res = await other.app.inject({
        method: 'PUT', url: `/users/${ids['boss']}.json`, headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: '{"last_name":"Durand"}',
      });
      assert.equal(res.statusCode, 204);
    } finally {
      await other.close();
    }
    // On PostgreSQL this process hears of the other's write by a notification, after its commit.
    await eventually(async () => assert.deepEqual(await logins('/users.json?q=durand'), ['2', ['elodie', 'boss']]));
  });
});
