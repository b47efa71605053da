import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { renderJson } from '../src/http/render/json.js';
import { renderXml } from '../src/http/render/xml.js';
import { openApiDocument } from '../src/openapi/openapi-document.js';
import type { ResourceDefinition } from '../src/http/render/resource-definition.js';
import { userResource } from '../src/users/user.resource.js';
import { ROUTES } from '../src/app/api-routes.js';
import type { RouteSpec } from '../src/http/route-spec.js';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { get } from './support/http.js';
import { fullDocument, readXmlBody, responseChecker } from './support/response-validation.js';

type Json = Record<string, unknown>;

describe('GET /openapi.json', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  it('is an OpenAPI 3.1 document a standard validator accepts', async () => {
    const res = await get(t.app, '/openapi.json');
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    const document = res.json<Json>();
    assert.equal(document.openapi, '3.1.0');
    const result = await new Validator().validate(document);
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
  });

  it('needs no credentials, is served as the same bytes with an ETag, and a matching If-None-Match gets 304', async () => {
    const first = await get(t.app, '/openapi.json');
    const second = await get(t.app, '/openapi.json');
    assert.equal(first.body, second.body);
    assert.match(String(first.headers.etag), /^W\/"[0-9a-f]{40}"$/);
    const again = await get(t.app, '/openapi.json', { 'if-none-match': String(first.headers.etag) });
    assert.equal(again.statusCode, 304);
    assert.equal(again.body, '');
    assert.equal((await get(t.app, '/openapi.xml')).statusCode, 406);
  });

  it('describes every endpoint in both formats, the pagination forms, the filters and the security schemes', async () => {
    const document = (await get(t.app, '/openapi.json')).json<Json>();
    const paths = document.paths as Record<string, Record<string, Json>>;
    // The Sentry protocol's routes have one fixed form (docs/sentry.md); every other is served in both formats.
    for (const route of ROUTES.filter((candidate) => candidate.formats)) {
      for (const format of ['json', 'xml']) {
        const path = `${route.path.replace(/:(\w+)/g, '{$1}')}.${format}`;
        assert.ok(paths[path]?.[route.method.toLowerCase()], `${route.method} ${path}`);
      }
    }
    const forms = Object.keys(paths).filter((path) => path.startsWith('/users.json'));
    assert.deepEqual(forms.sort(), ['/users.json', '/users.json/page/{page}', '/users.json/page/{page}/per_page/{per_page}', '/users.json/per_page/{per_page}', '/users.json/per_page/{per_page}/page/{page}']);
    const list = paths['/users.json']?.get as Json;
    assert.deepEqual((list.parameters as Json[]).map((p) => `${String(p.in)}:${String(p.name)}`), ['query:page', 'query:per_page', 'query:q', 'query:status', 'query:role_id', 'query:user_group_id']);
    const perPageSegment = paths['/users.json/per_page/{per_page}']?.get as Json;
    assert.deepEqual((perPageSegment.parameters as Json[]).map((p) => `${String(p.in)}:${String(p.name)}`), ['query:page', 'path:per_page', 'query:q', 'query:status', 'query:role_id', 'query:user_group_id']);
    const errors = paths['/sysadmin_tools/infrastructure/errors.xml']?.get as Json;
    assert.deepEqual((errors.parameters as Json[]).map((p) => p.name), ['page', 'per_page', 'sort', 'direction', 'reported', 'error_class', 'q', 'since', 'until', 'host', 'component', 'status', 'assignee', 'release', 'environment', 'saved']);
    const ok = (list.responses as Record<string, Json>)['200'] as Json;
    assert.deepEqual(Object.keys(ok.headers as Json), ['X-Request-Id', 'X-Runtime', 'Status', 'Cache-Control', 'ETag', 'X-Total', 'X-Limit', 'X-Page', 'Link', 'Set-Cookie']);
    assert.deepEqual((list.responses as Record<string, Json>)['401'], { $ref: '#/components/responses/UnauthorizedJson' });
    const schemes = (document.components as Json).securitySchemes as Json;
    assert.deepEqual(schemes.basic, { type: 'http', scheme: 'basic', description: 'login (or email) and password, or email (or login) and an API key' });
    assert.deepEqual(schemes.session, { type: 'apiKey', in: 'cookie', name: '_cmi_session', description: 'set after a credential login' });
    assert.deepEqual((paths['/health/live.json']?.get as Json).security, []);
  });

  it('is not served with CMI_OPENAPI=false, and neither is /docs', async () => {
    const off = await createTestApp({ CMI_OPENAPI: 'false' });
    try {
      assert.equal((await get(off.app, '/openapi.json')).statusCode, 401);
      assert.equal((await get(off.app, '/openapi.json', { authorization: off.adminAuth })).statusCode, 404);
      assert.equal((await get(off.app, '/docs', { authorization: off.adminAuth })).statusCode, 404);
    } finally {
      await off.close();
    }
  });
});

describe('the route table', () => {
  it('is the only way in: an app that registers a route the table does not name does not start', async () => {
    const t = await createTestApp();
    try {
      await assert.rejects(
        buildApp({ config: t.config, database: t.database, logger: false, extend: (app) => app.get('/undeclared', () => 'hello') }),
        { message: 'route GET /undeclared has no row in the route table (each feature declares its rows beside its routes; app/api-routes.ts gathers them)' },
      );
    } finally {
      await t.close();
    }
  });
});

describe('the response check every test app runs (test/support/response-validation.ts)', () => {
  const checker = responseChecker(fullDocument());
  const user = '{"user":{"id":1,"login":"a","email":"a@example.com","first_name":"A","last_name":"B","status":"active","time_zone":null,"locale":null,"created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00","activated_at":null,"suspend_at":null,"deleted_at":null,"password_changed_at":null,"roles":[{"role":{"id":2,"label":"User","identifier":"user","system":true,"created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00","permissions":[{"permission":{"id":2,"identifier":"users.read.own","label":"See the own user","created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00"}}]}}],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false}}';
  const check = (body: string, contentType = 'application/json; charset=utf-8', status = 200) =>
    checker.check({ method: 'GET', route: '/users/:id', status, contentType, body });

  it('admits what cmi answers and refuses a wrong type, a missing field, an extra field or a bad datetime', () => {
    assert.equal(check(user), undefined);
    assert.match(String(check(user.replace('"id":1', '"id":"1"'))), /must be integer/);
    assert.match(String(check(user.replace('"locale":null,', ''))), /must have required property 'locale'/);
    assert.match(String(check(user.replace('"locale":null', '"locale":null,"password_hash":"x"'))), /must NOT have additional properties/);
    assert.match(String(check(user.replace('2026-11-20T10:00:00+00:00', '2026-11-20T10:00:00Z'))), /must match pattern/);
    assert.equal(check('{"errors":{"base":["Resource not found"]}}', 'application/json; charset=utf-8', 404), undefined);
    assert.match(String(check('{"errors":{"base":[]}}', 'application/json; charset=utf-8', 404)), /must NOT have fewer than 1 items/);
    assert.match(String(check(user, 'text/html')), /content type text\/html is not in the document/);
  });

  it('reads XML by its type and nil attributes: an integer without type="integer" is refused', () => {
    // The XML writer takes Dates and unwrapped roles: build them back from the JSON above.
    const record = (JSON.parse(user) as { user: Json }).user;
    for (const key of ['created_at', 'updated_at']) record[key] = new Date(record[key] as string);
    const at = new Date('2026-11-20T10:00:00Z');
    record.roles = [{ id: 2, label: 'User', identifier: 'user', system: true, created_at: at, updated_at: at, permissions: [{ id: 2, identifier: 'users.read.own', label: 'See the own user', created_at: at, updated_at: at }] }];
    const good = renderXml({ kind: 'record', resource: userResource, record });
    assert.equal(check(good, 'application/xml; charset=utf-8'), undefined);
    assert.match(String(check(good.replace('<id type="integer">1</id>', '<id>1</id>'), 'application/xml; charset=utf-8')), /must be integer/);
    assert.match(String(check(good.replace('<locale nil="true"/>', '<locale nil="true">en</locale>'), 'application/xml; charset=utf-8')), /locale/);
    assert.deepEqual(readXmlBody('<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>a</error>\n  <error>b</error>\n</errors>\n'), { errors: { error: ['a', 'b'] } });
  });
});

describe('one source: a field added to a resource definition', () => {
  // A copy of the user resource with one more field, and a route table whose user routes use it.
  const extended: ResourceDefinition = { ...userResource, fields: [...userResource.fields, ['nickname', 'string']] };
  const routes: RouteSpec[] = ROUTES.map((route) => {
    const answers = Object.fromEntries(Object.entries(route.answers).map(([status, answer]) => [status, 'record' in answer && answer.record === userResource ? { record: extended } : 'list' in answer && answer.list === userResource ? { list: extended } : answer]));
    return { ...route, answers };
  });
  const record = { id: 1, login: 'a', email: 'a@example.com', first_name: 'A', last_name: 'B', status: 'active', time_zone: null, locale: null, created_at: new Date(0), updated_at: new Date(0), activated_at: null, suspend_at: null, deleted_at: null, password_changed_at: null, roles: [], bucket_id: null, user_group_id: null, totp_enabled: false, registered_yubikey: false, nickname: 'ace' };

  it('changes the JSON, the XML and the document together', () => {
    const json = renderJson({ kind: 'record', resource: extended, record });
    const xml = renderXml({ kind: 'record', resource: extended, record });
    assert.match(json, /,"roles":\[\],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false,"nickname":"ace"\}\}$/);
    assert.match(xml, /<roles type="array"\/>\n {2}<bucket_id nil="true"\/>\n {2}<user_group_id nil="true"\/>\n {2}<totp_enabled type="boolean">false<\/totp_enabled>\n {2}<registered_yubikey type="boolean">false<\/registered_yubikey>\n {2}<nickname>ace<\/nickname>\n<\/user>\n$/);

    const before = openApiDocument({ version: '1.0', routes: ROUTES });
    const afterAdding = openApiDocument({ version: '1.0', routes });
    const fieldsOf = (document: Json, name: string) => Object.keys(((document.components as Json).schemas as Record<string, Json>)[name]?.properties as Json);
    assert.deepEqual(fieldsOf(afterAdding, 'User'), [...fieldsOf(before, 'User'), 'nickname']);
    assert.deepEqual(fieldsOf(afterAdding, 'UserXml'), [...fieldsOf(before, 'UserXml'), 'nickname']);

    // The new bodies pass the new document and not the old one, which does not know the field.
    const now = responseChecker(afterAdding, routes);
    const old = responseChecker(before, ROUTES);
    for (const [body, contentType] of [[json, 'application/json'], [xml, 'application/xml']] as const) {
      const response = { method: 'GET', route: '/users/:id', status: 200, contentType, body };
      assert.equal(now.check(response), undefined);
      assert.match(String(old.check(response)), /must NOT have additional properties/);
    }
  });
});
