import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp, listenLocally } from './support/app.js';
import { ACCESS_DENIED_JSON, ACCESS_DENIED_XML } from './support/http.js';

/**
 * Who reads a body (docs/limits.md#request-bodies): credentials and a route decide before any body is
 * parsed, and the XML reader counts the elements it really opens.
 */

const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';
const NOT_FOUND_JSON = '{"errors":{"base":["Resource not found"]}}';
const NOT_FOUND_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Resource not found</error>\n</errors>\n';
const TOO_DEEP_JSON = '{"errors":{"base":["XML body is nested deeper than 32 levels"]}}';
const TOO_DEEP_XML = '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>XML body is nested deeper than 32 levels</error>\n</errors>\n';

function assertAnswer(res: LightMyRequestResponse, status: number, contentType: string, body: string): void {
  assert.equal(res.statusCode, status, res.body.slice(0, 300));
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers.status, `${status} ${res.statusMessage}`);
  assert.ok(res.headers['x-request-id']);
  assert.equal(res.body, body);
}

function assertDenied(res: LightMyRequestResponse, format: 'json' | 'xml'): void {
  assertAnswer(res, 401, format === 'json' ? JSON_TYPE : XML_TYPE, format === 'json' ? ACCESS_DENIED_JSON : ACCESS_DENIED_XML);
  assert.equal(res.headers['www-authenticate'], 'Basic realm="cmi"');
}

/** ~1 MiB of XML the old depth check took for flat (`/>` in attribute values), nested 100 deep, cut short at its end. */
const expensiveXml = (root: string) =>
  `<${root}>${`<z>${'<a x="/>">'.repeat(99)}${'</a>'.repeat(99)}</z>`.repeat(740)}<unclosed>`;

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(() => t.close());

const send = (method: 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, contentType: string, payload: string, authorization?: string) =>
  t.app.inject({ method, url, payload, headers: { 'content-type': contentType, ...(authorization ? { authorization } : {}) } });

describe('a body is parsed only once credentials and a route accept the request', () => {
  const unroutable: Array<[method: 'POST' | 'PUT' | 'DELETE' | 'PATCH', url: string, format: 'json' | 'xml']> = [
    ['POST', '/version.xml', 'xml'],
    ['PUT', '/version.json', 'json'],
    ['PATCH', '/users.json', 'json'],
    ['POST', '/no/such/path.json', 'json'],
    ['DELETE', '/no-such-path.xml', 'xml'],
  ];
  for (const [method, url, format] of unroutable) {
    it(`${method} ${url} without credentials: 401 for a malformed JSON or XML body, never 422`, async () => {
      assertDenied(await send(method, url, 'application/json', '{"not json'), format);
      assertDenied(await send(method, url, 'application/xml', '<not-xml'), format);
    });

    it(`${method} ${url} with credentials: 404 for a malformed body, which is not read`, async () => {
      assertAnswer(await send(method, url, 'application/json', '{"not json', t.aliceAuth), 404, format === 'json' ? JSON_TYPE : XML_TYPE, format === 'json' ? NOT_FOUND_JSON : NOT_FOUND_XML);
      assertAnswer(await send(method, url, 'application/xml', '<not-xml', t.aliceAuth), 404, format === 'json' ? JSON_TYPE : XML_TYPE, format === 'json' ? NOT_FOUND_JSON : NOT_FOUND_XML);
    });
  }

  it('an unknown path with an unknown extension and credentials: 406 before any body', async () => {
    assertAnswer(await send('POST', '/no-such-path.txt', 'application/json', '{"not json', t.aliceAuth), 406, JSON_TYPE, '{"errors":{"base":["Not acceptable: use the .json or .xml extension"]}}');
  });

  it('an unknown Content-Type to an unknown path: 401, then 404, not 415', async () => {
    assertDenied(await send('POST', '/no-such-path.json', 'text/plain', 'x'), 'json');
    assertAnswer(await send('POST', '/no-such-path.json', 'text/plain', 'x', t.aliceAuth), 404, JSON_TYPE, NOT_FOUND_JSON);
  });

  it('a routed path with bad credentials: 401 for a malformed body', async () => {
    assertDenied(await send('POST', '/sysadmin_tools/infrastructure/errors.json', 'application/json', '{"not json', t.basic('admin', 'wrong')), 'json');
    assertDenied(await send('PUT', `/users/${t.alice.id}.xml`, 'application/xml', '<not-xml'), 'xml');
  });

  it('~1 MiB of expensive XML without credentials is not read: 401 (reading it would be 422)', async () => {
    const body = expensiveXml('user');
    assert.ok(body.length > 1_000_000 && body.length < 1_048_576);
    assertDenied(await send('POST', '/version.xml', 'application/xml', body), 'xml');
    assertDenied(await send('POST', '/users.xml', 'application/xml', body), 'xml');
    assertDenied(await send('POST', '/no-such-path.xml', 'application/xml', body), 'xml');
  });

  describe('over a socket, a body announced but not sent', () => {
    let port: number;
    before(async () => {
      port = await listenLocally(t.app);
    });

    /** Sends a request announcing 1,000,000 bytes of body and only its first bytes; resolves with all the server sent once it closed. */
    const announced = (method: string, path: string, headers: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ port, host: '127.0.0.1' });
        let text = '';
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('utf8');
        });
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
        socket.write(`${method} ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n${headers}\r\n{"a":`);
      });

    it('to a method its path does not route, without credentials: 401 with Connection: close, the socket closed unread', { timeout: 20_000 }, async () => {
      const all = await announced('PUT', '/version.json', '');
      assert.match(all, /^HTTP\/1\.1 401 Unauthorized\r\n/);
      assert.match(all, /\r\nconnection: close\r\n/i);
      assert.ok(all.endsWith(`\r\n\r\n${ACCESS_DENIED_JSON}`), all);
    });

    it('to an unknown path, with credentials: 404 with Connection: close, the socket closed unread', { timeout: 20_000 }, async () => {
      const all = await announced('POST', '/no-such-path.json', `Authorization: ${t.aliceAuth}\r\n`);
      assert.match(all, /^HTTP\/1\.1 404 Not Found\r\n/);
      assert.match(all, /\r\nconnection: close\r\n/i);
      assert.ok(all.endsWith(`\r\n\r\n${NOT_FOUND_JSON}`), all);
    });
  });
});

describe('the XML nesting limit counts the elements the reader opens', () => {
  const deep = (levels: number, open: string) => `${open.repeat(levels)}${'</a>'.repeat(levels)}`;
  const report = (inner: string) => `<infrastructure_error><error_class>Deep</error_class><extra>${inner}</extra></infrastructure_error>`;

  it('`/>` inside attribute values hides no level: 400 on every route, in the requested format', async () => {
    const hidden = (root: string) => `<${root}>${deep(40, '<a x="/>" y=\'/>\'>')}</${root}>`;
    assertAnswer(await send('POST', '/sysadmin_tools/infrastructure/errors.json', 'application/xml', hidden('infrastructure_error'), t.adminAuth), 400, JSON_TYPE, TOO_DEEP_JSON);
    assertAnswer(await send('POST', '/sysadmin_tools/infrastructure/errors.xml', 'application/xml', hidden('infrastructure_error'), t.adminAuth), 400, XML_TYPE, TOO_DEEP_XML);
    assertAnswer(await send('PUT', `/users/${t.alice.id}.xml`, 'application/xml', hidden('user'), t.aliceAuth), 400, XML_TYPE, TOO_DEEP_XML);
    assertAnswer(await send('POST', '/users.json', 'application/xml', hidden('user'), t.adminAuth), 400, JSON_TYPE, TOO_DEEP_JSON);
  });

  it('reading stops at the first element past 32 levels: a ~1 MiB body broken at its end is "too deep", not "not well-formed"', async () => {
    const body = `<infrastructure_error>${'<a x="/>">'.repeat(40)}${'<b>x</b>'.repeat(130_000)}<unclosed>`;
    assert.ok(body.length > 1_000_000 && body.length < 1_048_576);
    assertAnswer(await send('POST', '/sysadmin_tools/infrastructure/errors.json', 'application/xml', body, t.adminAuth), 400, JSON_TYPE, TOO_DEEP_JSON);
  });

  it('a ~1 MiB expensive body with credentials is refused at its 33rd level', async () => {
    assertAnswer(await send('POST', '/users.json', 'application/xml', expensiveXml('user'), t.adminAuth), 400, JSON_TYPE, TOO_DEEP_JSON);
  });

  it('32 levels are read (the root counting as the first), and markup in comments and CDATA opens nothing', async () => {
    // infrastructure_error (1) > extra (2) > 30 levels of <a> = 32.
    const inner = `<!-- ${'<a>'.repeat(40)} --><![CDATA[${'<a>'.repeat(40)}]]>${deep(30, '<a x="/>">')}`;
    const res = await send('POST', '/sysadmin_tools/infrastructure/errors.json', 'application/xml', report(inner), t.adminAuth);
    assert.equal(res.statusCode, 201, res.body);
    const tooDeep = await send('POST', '/sysadmin_tools/infrastructure/errors.json', 'application/xml', report(deep(31, '<a>')), t.adminAuth);
    assertAnswer(tooDeep, 400, JSON_TYPE, TOO_DEEP_JSON);
  });
});
