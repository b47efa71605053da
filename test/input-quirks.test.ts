import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp, listenLocally } from './support/app.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';
const ERRORS_JSON = '/sysadmin_tools/infrastructure/errors.json';
const ERRORS_XML = '/sysadmin_tools/infrastructure/errors.xml';
const NOT_UTF8 = '{"errors":{"base":["Request body is not valid UTF-8"]}}';
const charsetRefused = (charset: string) => `{"errors":{"base":["Unsupported charset ${charset}: send the body in UTF-8"]}}`;
const reservedName = (name: string) => `{"errors":{"base":["XML element <${name}> is not allowed: constructor, prototype and __proto__ are reserved names"]}}`;

function assertError(res: LightMyRequestResponse, status: number, body: string, contentType = JSON_TYPE): void {
  assert.equal(res.statusCode, status, `status of ${res.body.slice(0, 200)}`);
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.body, body);
}

/** The message of the infrastructure error a 201 answer recorded. */
function recordedMessage(res: LightMyRequestResponse): unknown {
  assert.equal(res.statusCode, 201, res.body);
  return (JSON.parse(res.body) as { infrastructure_error: { message: unknown } }).infrastructure_error.message;
}

/** Sends `head` (request line and headers, CRLF-separated, without the blank line) on a raw socket; resolves with all the server sent until it closed or one whole answer arrived. */
function rawExchange(port: number, head: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const done = () => {
      socket.destroy();
      resolve(received);
    };
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(received);
      if (end !== -1 && length && received.length >= end + 4 + Number(length[1])) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
    socket.write(`${head}\r\n\r\n`);
  });
}

describe('request bodies are read as UTF-8 only (docs/limits.md#request-bodies)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const post = (payload: string | Buffer, contentType: string, url = ERRORS_JSON) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth, 'content-type': contentType }, payload });

  const latin1Body = Buffer.from('{"error_class":"X","message":"caf\u00e9"}', 'latin1');

  for (const [contentType, charset] of [
    ['application/json; charset=iso-8859-1', 'iso-8859-1'],
    ['application/json; charset="UTF-16"', 'UTF-16'],
    ['application/json;charset=windows-1252', 'windows-1252'],
    ['application/xml; charset=ISO-8859-1', 'ISO-8859-1'],
  ] as const) {
    it(`answers 415 for ${contentType}`, async () => {
      assertError(await post(latin1Body, contentType), 415, charsetRefused(charset));
    });
  }

  it('answers the charset 415 in XML on an .xml path', async () => {
    const res = await post('<infrastructure_error><error_class>X</error_class></infrastructure_error>', 'application/xml; charset=utf-16', ERRORS_XML);
    assertError(
      res,
      415,
      '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Unsupported charset utf-16: send the body in UTF-8</error>\n</errors>\n',
      XML_TYPE,
    );
  });

  it('accepts charset=utf-8 and utf8, in any case and quoted', async () => {
    for (const [i, contentType] of ['application/json; charset=utf-8', 'application/json; charset=UTF8', 'application/json; charset="Utf-8"'].entries()) {
      assert.equal(recordedMessage(await post(`{"error_class":"UTF-8 ${i}","message":"caf\u00e9"}`, contentType)), 'caf\u00e9');
    }
  });

  it('answers 422 for a body that is not valid UTF-8 (Latin-1 bytes sent without a charset), JSON and XML', async () => {
    assertError(await post(latin1Body, 'application/json'), 422, NOT_UTF8);
    const xml = Buffer.from('<infrastructure_error><error_class>caf\u00e9</error_class></infrastructure_error>', 'latin1');
    assertError(await post(xml, 'application/xml'), 422, NOT_UTF8);
  });

  it('answers 422 for UTF-16 sent without a charset', async () => {
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"error_class":"X"}', 'utf16le')]);
    assertError(await post(utf16, 'application/json'), 422, NOT_UTF8);
  });

  it('accepts a UTF-8 byte-order mark before JSON and before XML', async () => {
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    const json = Buffer.concat([bom, Buffer.from('{"error_class":"BOM-JSON","message":"\u00e9t\u00e9"}')]);
    assert.equal(recordedMessage(await post(json, 'application/json')), '\u00e9t\u00e9');
    const xml = Buffer.concat([bom, Buffer.from('<?xml version="1.0" encoding="UTF-8"?><infrastructure_error><error_class>BOM-XML</error_class><message>\u00e9t\u00e9</message></infrastructure_error>')]);
    assert.equal(recordedMessage(await post(xml, 'application/xml')), '\u00e9t\u00e9');
  });
});

describe('XML elements with names reserved by JavaScript (docs/limits.md#request-bodies)', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  for (const name of ['constructor', 'prototype', '__proto__']) {
    it(`answers 422 naming <${name}>, and pollutes nothing`, async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: ERRORS_JSON,
        headers: { authorization: t.adminAuth, 'content-type': 'application/xml' },
        payload: `<infrastructure_error><error_class>X</error_class><${name}><polluted>yes</polluted></${name}></infrastructure_error>`,
      });
      assertError(res, 422, reservedName(name));
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });
  }
});

describe('credentials headers given twice (docs/limits.md#authentication)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp();
    port = await listenLocally(t.app);
  });
  after(() => t.close());

  const twice = (header: string) => `{"errors":{"base":["The ${header} header must be given only once"]}}`;

  it('answers 400 to two Authorization headers, even when the first is right', async () => {
    const answer = await rawExchange(port, `GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nauthorization: ${t.aliceAuth}`);
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\ncontent-type: application\/json; charset=utf-8\r\n/);
    assert.match(answer, /\r\nstatus: 400 Bad Request\r\n/);
    assert.doesNotMatch(answer, /set-cookie/i);
    assert.ok(answer.endsWith(`\r\n\r\n${twice('Authorization')}`), answer);
  });

  it('answers 400 to two Cookie headers, in XML on an .xml path', async () => {
    const answer = await rawExchange(port, 'GET /version.xml HTTP/1.1\r\nHost: x\r\nCookie: _cmi_session=a\r\nCookie: _cmi_session=b');
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.match(answer, /\r\ncontent-type: application\/xml; charset=utf-8\r\n/);
    assert.ok(
      answer.endsWith('\r\n\r\n<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>The Cookie header must be given only once</error>\n</errors>\n'),
      answer,
    );
  });

  it('still answers one Authorization header, and a cached one, with 200', async () => {
    for (let i = 0; i < 2; i++) {
      const answer = await rawExchange(port, `GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}`);
      assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(answer.endsWith('\r\n\r\n{"version":"6.7"}'), answer);
    }
  });

  it('answers 400 to a duplicate also when the first Authorization was verified moments ago', async () => {
    const answer = await rawExchange(port, `GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\nAuthorization: ${t.adminAuth}`);
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/);
    assert.ok(answer.endsWith(`\r\n\r\n${twice('Authorization')}`), answer);
  });
});
