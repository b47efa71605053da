import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { roleXml } from './support/roles.js';
import { get } from './support/http.js';

const adminJson = (t: TestApp) =>
  '{"user":{"id":1,"login":"admin","email":"admin@example.com","first_name":"Ada","last_name":"Admin","status":"active",' +
  '"time_zone":"UTC","locale":"en","created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00",' +
  '"activated_at":"2026-11-20T10:00:00+00:00","suspend_at":null,"deleted_at":null,"password_changed_at":"2026-11-20T10:00:00+00:00",' +
  `"roles":[{"role":${JSON.stringify(t.systemRoles.admin)}}],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false}}`;

const aliceXml = (t: TestApp) => `<?xml version="1.0" encoding="UTF-8"?>
<users type="array">
  <user>
    <id type="integer">2</id>
    <login>alice</login>
    <email>alice@example.com</email>
    <first_name>Alice</first_name>
    <last_name>User</last_name>
    <status>active</status>
    <time_zone nil="true"/>
    <locale nil="true"/>
    <created_at type="datetime">2026-11-20T10:00:00+00:00</created_at>
    <updated_at type="datetime">2026-11-20T10:00:00+00:00</updated_at>
    <activated_at type="datetime">2026-11-20T10:00:00+00:00</activated_at>
    <suspend_at nil="true"/>
    <deleted_at nil="true"/>
    <password_changed_at type="datetime">2026-11-20T10:00:00+00:00</password_changed_at>
    <roles type="array">
${roleXml(t.systemRoles.user, '      ')}    </roles>
    <bucket_id nil="true"/>
    <user_group_id nil="true"/>
    <totp_enabled type="boolean">false</totp_enabled>
    <registered_yubikey type="boolean">false</registered_yubikey>
  </user>
</users>
`;

describe('GET /users (pagination)', () => {
  let t: TestApp;
  // Nine users in all: admin (1), alice (2), user001..user007 (3..9).
  before(async () => {
    t = await createTestApp();
    await t.addUsers(7);
  });
  after(() => t.close());

  const list = (url: string, authorization = t.adminAuth) => get(t.app, url, { authorization });
  const ids = (body: string) => (JSON.parse(body) as Array<{ user: { id: number } }>).map((item) => item.user.id);

  it('writes one user exactly in JSON: wrapped in its root, roles as an array of wrapped roles (docs/api.md#users)', async () => {
    const res = await list('/users.json?per_page=1');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.body, `[${adminJson(t)}]`);
  });

  it('writes one user exactly in XML, typed, with nil for nulls', async () => {
    const res = await list('/users.xml/page/2/per_page/1');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/xml; charset=utf-8');
    assert.equal(res.body, aliceXml(t));
  });

  const forms: Array<[name: string, path: string, page: number, perPage: number, expectedIds: number[]]> = [
    ['1. /page/<page>', '/users.EXT/page/2', 2, 25, []],
    ['2. ?page=<page>', '/users.EXT?page=1', 1, 25, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['3. /per_page/<n>', '/users.EXT/per_page/4', 1, 4, [1, 2, 3, 4]],
    ['4. ?per_page=<n>', '/users.EXT?per_page=4', 1, 4, [1, 2, 3, 4]],
    ['5. /page/<page>/per_page/<n>', '/users.EXT/page/4/per_page/2', 4, 2, [7, 8]],
    ['6. /per_page/<n>/page/<page>', '/users.EXT/per_page/2/page/4', 4, 2, [7, 8]],
    ['7. ?page=<page>&per_page=<n>', '/users.EXT?page=4&per_page=2', 4, 2, [7, 8]],
    ['mixed: /page/<page>?per_page=<n>', '/users.EXT/page/3?per_page=3', 3, 3, [7, 8, 9]],
    ['no parameters', '/users.EXT', 1, 25, [1, 2, 3, 4, 5, 6, 7, 8, 9]],
  ];

  for (const [name, template, page, perPage, expectedIds] of forms) {
    it(`form ${name} in JSON and XML`, async () => {
      const json = await list(template.replace('EXT', 'json'));
      assert.equal(json.statusCode, 200);
      assert.deepEqual(ids(json.body), expectedIds);
      assert.equal(json.headers['x-total'], '9');
      assert.equal(json.headers['x-limit'], String(perPage));
      assert.equal(json.headers['x-page'], String(page));

      const xml = await list(template.replace('EXT', 'xml'));
      assert.equal(xml.statusCode, 200);
      const xmlIds = [...xml.body.matchAll(/<user>\n {4}<id type="integer">(\d+)<\/id>/g)].map((m) => Number(m[1]));
      assert.deepEqual(xmlIds, expectedIds);
      assert.equal(xml.headers['x-total'], '9');
      assert.equal(xml.headers['x-limit'], String(perPage));
      assert.equal(xml.headers['x-page'], String(page));
    });
  }

  it('links first, prev, next and last in the query style of the request', async () => {
    const res = await list('/users.json?page=4&per_page=2');
    assert.equal(
      res.headers.link,
      '</users.json?page=1&per_page=2>; rel="first", </users.json?page=3&per_page=2>; rel="prev", ' +
        '</users.json?page=5&per_page=2>; rel="next", </users.json?page=5&per_page=2>; rel="last"',
    );
  });

  it('links in the path style of the request, and in a mix when the request mixed', async () => {
    const path = await list('/users.xml/per_page/2/page/4');
    assert.equal(
      path.headers.link,
      '</users.xml/page/1/per_page/2>; rel="first", </users.xml/page/3/per_page/2>; rel="prev", ' +
        '</users.xml/page/5/per_page/2>; rel="next", </users.xml/page/5/per_page/2>; rel="last"',
    );
    const mixed = await list('/users.json/page/2?per_page=4');
    assert.equal(
      mixed.headers.link,
      '</users.json/page/1?per_page=4>; rel="first", </users.json/page/1?per_page=4>; rel="prev", ' +
        '</users.json/page/3?per_page=4>; rel="next", </users.json/page/3?per_page=4>; rel="last"',
    );
  });

  it('on the first page has no prev, on the last no next', async () => {
    const first = await list('/users.json?per_page=5');
    assert.equal(first.headers.link, '</users.json?page=1&per_page=5>; rel="first", </users.json?page=2&per_page=5>; rel="next", </users.json?page=2&per_page=5>; rel="last"');
    const last = await list('/users.json?page=2&per_page=5');
    assert.equal(last.headers.link, '</users.json?page=1&per_page=5>; rel="first", </users.json?page=1&per_page=5>; rel="prev", </users.json?page=2&per_page=5>; rel="last"');
  });

  it('past the last page answers 200 with an empty list in both formats', async () => {
    const json = await list('/users.json?page=99&per_page=5');
    assert.equal(json.statusCode, 200);
    assert.equal(json.body, '[]');
    assert.equal(json.headers['x-total'], '9');
    assert.equal(json.headers['x-page'], '99');
    assert.equal(json.headers.link, '</users.json?page=1&per_page=5>; rel="first", </users.json?page=2&per_page=5>; rel="prev", </users.json?page=2&per_page=5>; rel="last"');
    const xml = await list('/users.xml/page/99');
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.body, '<?xml version="1.0" encoding="UTF-8"?>\n<users type="array"/>\n');
  });

  it('accepts per_page up to the maximum (1000) and names the field beyond it', async () => {
    const max = await list('/users.json?per_page=1000');
    assert.equal(max.statusCode, 200);
    assert.equal(max.headers['x-limit'], '1000');
    const over = await list('/users.json?per_page=1001');
    assert.equal(over.statusCode, 422);
    assert.equal(over.body, '{"errors":{"per_page":["must be an integer from 1 to 1000"]}}');
  });

  it('names every bad parameter in one 422, in XML as full messages', async () => {
    const res = await list('/users.xml/page/0?per_page=x');
    assert.equal(res.statusCode, 422);
    assert.equal(
      res.body,
      '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Page must be an integer from 1 to 2147483647</error>\n' +
        '  <error>Per page must be an integer from 1 to 1000</error>\n</errors>\n',
    );
  });

  it('refuses a parameter given twice, in the query or in path and query', async () => {
    for (const url of ['/users.json?page=1&page=2', '/users.json/page/1?page=1', '/users.json/per_page/2/per_page/3']) {
      const res = await list(url);
      assert.equal(res.statusCode, 422, url);
      assert.match(res.body, /"(page|per_page)":\["must be given only once"\]/, url);
    }
  });

  it('shows an ordinary user only its own record', async () => {
    const res = await list('/users.json', t.aliceAuth);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(ids(res.body), [2]);
    assert.equal(res.headers['x-total'], '1');
  });

  it('never writes a password, hash or key', async () => {
    const res = await list('/users.json?per_page=1000');
    // "api_key" the field: users.api_key, a permission of the admin role, is no key.
    assert.doesNotMatch(res.body, /password"|hash|"api_key"|\$argon2/);
    const xml = await list('/users.xml?per_page=1000');
    assert.doesNotMatch(xml.body, /<password>|hash|<api_key>|\$argon2/);
  });
});

describe('GET /users with configured page sizes', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ CMI_DEFAULT_PER_PAGE: '1', CMI_MAX_PER_PAGE: '3' });
  });
  after(() => t.close());

  it('uses CMI_DEFAULT_PER_PAGE without parameters and CMI_MAX_PER_PAGE as the limit', async () => {
    const res = await t.app.inject({ url: '/users.json', headers: { authorization: t.adminAuth } });
    assert.equal(res.headers['x-limit'], '1');
    assert.equal(res.headers['x-total'], '2');
    const over = await t.app.inject({ url: '/users.json?per_page=4', headers: { authorization: t.adminAuth } });
    assert.equal(over.statusCode, 422);
    assert.equal(over.body, '{"errors":{"per_page":["must be an integer from 1 to 3"]}}');
  });
});
