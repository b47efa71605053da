import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { get } from './support/http.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';
const ERRORS_JSON = '/sysadmin_tools/infrastructure/errors.json';
const ERRORS_XML = '/sysadmin_tools/infrastructure/errors.xml';
const NOT_FOUND = '{"errors":{"base":["Resource not found"]}}';
const NOT_ACCEPTABLE = '{"errors":{"base":["Not acceptable: use the .json or .xml extension"]}}';
const BAD_PAGE = 'must be an integer from 1 to 2147483647';
const BAD_PER_PAGE = 'must be an integer from 1 to 1000';
const GIVEN_TWICE = 'must be given only once';
const NOT_JSON = '{"errors":{"base":["Request body is not valid JSON"]}}';
const NOT_XML = '{"errors":{"base":["Request body is not well-formed XML"]}}';
const NO_DTD = '{"errors":{"base":["XML body must not contain a DTD or entity declarations"]}}';
const TOO_DEEP = '{"errors":{"base":["XML body is nested deeper than 32 levels"]}}';
const TOO_LARGE = '{"errors":{"base":["Request body is larger than the limit of 1048576 bytes"]}}';
const UNSUPPORTED = '{"errors":{"base":["Unsupported Content-Type: send application/json or application/xml"]}}';

/** The XML error body (docs/api.md#errors): `<errors><error>message</error>...</errors>`. */
const xmlErrors = (...messages: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n${messages.map((m) => `  <error>${m}</error>\n`).join('')}</errors>\n`;

/** An error answered exactly (docs/api.md#errors): status, format, error headers and body bytes. */
function assertError(res: LightMyRequestResponse, status: number, body: string, contentType = JSON_TYPE): void {
  assert.equal(res.statusCode, status, `status of ${res.body.slice(0, 200)}`);
  assert.equal(res.headers['content-type'], contentType);
  assert.equal(res.headers['cache-control'], 'no-cache');
  assert.equal(res.headers.status, `${status} ${res.statusMessage}`);
  assert.ok(res.headers['x-request-id'], 'X-Request-Id is set');
  assert.equal(res.body, body);
}

describe('bad input answers a clear 4xx in the requested format, never a 500', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const asAdmin = (url: string, headers: Record<string, string> = {}) => get(t.app, url, { authorization: t.adminAuth, ...headers });

  const post = (payload: string, contentType = 'application/json', url = ERRORS_JSON) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: t.adminAuth, 'content-type': contentType }, payload });

  describe('ids', () => {
    it('answers 404 for an id no record has', async () => {
      assertError(await asAdmin('/sysadmin_tools/infrastructure/errors/12345.json'), 404, NOT_FOUND);
    });

    it('answers 404 for an id no record has in XML on an .xml path', async () => {
      assertError(await asAdmin('/sysadmin_tools/infrastructure/errors/12345.xml'), 404, xmlErrors('Resource not found'), XML_TYPE);
    });

    for (const id of ['abc', '1.5', '-1', '0', '99999999999', '1e3', '0x10']) {
      it(`answers 404 for the non-integer or out-of-range id ${JSON.stringify(id)}`, async () => {
        assertError(await asAdmin(`/sysadmin_tools/infrastructure/errors/${id}.json`), 404, NOT_FOUND);
      });
    }

    it('answers 404 for an id of 10,000 digits', async () => {
      assertError(await asAdmin(`/sysadmin_tools/infrastructure/errors/${'1'.repeat(10_000)}.json`), 404, NOT_FOUND);
    });
  });

  describe('paths', () => {
    it('answers 404 for an unknown path', async () => {
      assertError(await asAdmin('/no_such_thing.json'), 404, NOT_FOUND);
    });

    it('answers 404 for an unknown path in XML on an .xml path', async () => {
      assertError(await asAdmin('/no_such_thing.xml'), 404, xmlErrors('Resource not found'), XML_TYPE);
    });

    it('answers 404 for a path of 10,000 characters', async () => {
      assertError(await asAdmin(`/${'a'.repeat(9_999)}`), 404, NOT_FOUND);
    });

    it('answers 404 for pagination segments on a path that is not a list', async () => {
      assertError(await asAdmin('/version.json/page/2'), 404, NOT_FOUND);
    });

    it('answers 404 for a path with malformed percent-encoding', async () => {
      assertError(await asAdmin('/users%E0%A4%A.json'), 404, NOT_FOUND);
    });

    it('answers 404 for a method the path does not have', async () => {
      assertError(await t.app.inject({ method: 'PUT', url: '/version.json', headers: { authorization: t.adminAuth } }), 404, NOT_FOUND);
    });
  });

  describe('extensions', () => {
    it('answers 406 in JSON for the unknown extension .yaml', async () => {
      assertError(await asAdmin('/version.yaml'), 406, NOT_ACCEPTABLE);
    });

    it('answers 406 in JSON for .yaml even when Accept asks for XML', async () => {
      assertError(await asAdmin('/users.yaml', { accept: 'application/xml' }), 406, NOT_ACCEPTABLE);
    });

    it('answers 406 in JSON for an unknown extension on a record path', async () => {
      assertError(await asAdmin('/sysadmin_tools/infrastructure/errors/1.yaml'), 406, NOT_ACCEPTABLE);
    });
  });

  describe('pagination parameters', () => {
    const badPage = `{"errors":{"page":["${BAD_PAGE}"]}}`;
    const badPerPage = `{"errors":{"per_page":["${BAD_PER_PAGE}"]}}`;

    for (const value of ['0', '-1', 'abc', '1.5', '']) {
      it(`answers 422 naming page for ?page=${value}`, async () => {
        assertError(await asAdmin(`/users.json?page=${value}`), 422, badPage);
      });
    }

    for (const value of ['0', '-1', 'abc', '1.5', '1001', '']) {
      it(`answers 422 naming per_page for ?per_page=${value}`, async () => {
        assertError(await asAdmin(`/users.json?per_page=${value}`), 422, badPerPage);
      });
    }

    it('answers 422 naming page for a bad page path segment', async () => {
      assertError(await asAdmin('/users.json/page/0'), 422, badPage);
    });

    it('answers 422 naming per_page for a bad per_page path segment', async () => {
      assertError(await asAdmin('/users.json/per_page/abc'), 422, badPerPage);
    });

    it('answers 422 naming both fields when both are bad', async () => {
      assertError(await asAdmin('/users.json?page=abc&per_page=1001'), 422, `{"errors":{"page":["${BAD_PAGE}"],"per_page":["${BAD_PER_PAGE}"]}}`);
    });

    it('answers a 422 in XML on an .xml path, with the field named in each message', async () => {
      const res = await asAdmin('/users.xml?page=1.5&per_page=0');
      assertError(res, 422, xmlErrors(`Page ${BAD_PAGE}`, `Per page ${BAD_PER_PAGE}`), XML_TYPE);
    });

    it('answers 422 for page repeated in the query', async () => {
      assertError(await asAdmin('/users.json?page=1&page=2'), 422, `{"errors":{"page":["${GIVEN_TWICE}"]}}`);
    });

    it('answers 422 for per_page repeated in the query, even with equal values', async () => {
      assertError(await asAdmin('/users.json?per_page=2&per_page=2'), 422, `{"errors":{"per_page":["${GIVEN_TWICE}"]}}`);
    });

    it('answers 422 for page given both as a path segment and in the query', async () => {
      assertError(await asAdmin('/users.json/page/1?page=2'), 422, `{"errors":{"page":["${GIVEN_TWICE}"]}}`);
    });

    it('answers 422 for per_page repeated as path segments', async () => {
      assertError(await asAdmin('/users.json/per_page/2/page/1/per_page/3'), 422, `{"errors":{"per_page":["${GIVEN_TWICE}"]}}`);
    });

    it('accepts per_page at its maximum of 1000', async () => {
      const res = await asAdmin('/users.json?per_page=1000');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-limit'], '1000');
    });
  });

  describe('JSON request bodies', () => {
    it('answers 422 for malformed JSON', async () => {
      assertError(await post('{"error_class": "TypeError"'), 422, NOT_JSON);
    });

    it('answers 422 for malformed JSON in XML on an .xml path', async () => {
      assertError(await post('{"error_class": ', 'application/json', ERRORS_XML), 422, xmlErrors('Request body is not valid JSON'), XML_TYPE);
    });

    for (const body of ['[]', '"text"', '42', 'null', '']) {
      it(`answers 422 on base for a body that is not an object: ${JSON.stringify(body)}`, async () => {
        const res = await post(body);
        assert.equal(res.statusCode, 422);
        assert.equal(res.headers['content-type'], JSON_TYPE);
        const parsed = JSON.parse(res.body) as { errors: Record<string, unknown> };
        assert.deepEqual(Object.keys(parsed.errors), ['base']);
      });
    }

    it('answers 422 naming each field of the wrong type', async () => {
      const res = await post('{"error_class":5,"message":[],"backtrace":{}}');
      assertError(res, 422, '{"errors":{"error_class":["must be a string"],"message":["must be a string"],"backtrace":["must be a string or an array of strings"]}}');
    });

    it('answers 422 naming each field of the wrong type inside the record root, in XML on an .xml path', async () => {
      const res = await post('{"infrastructure_error":{"error_class":true,"message":1.5,"backtrace":["a",{}]}}', 'application/json', ERRORS_XML);
      assertError(res, 422, xmlErrors('Error class must be a string', 'Message must be a string', 'Backtrace must be a string or an array of strings'), XML_TYPE);
    });

    it('answers 422 naming error_class when it is missing', async () => {
      assertError(await post('{"message":"boom"}'), 422, `{"errors":{"error_class":["can't be blank"]}}`);
    });

    it('answers 422 naming error_class when it is blank', async () => {
      assertError(await post('{"error_class":"   "}'), 422, `{"errors":{"error_class":["can't be blank"]}}`);
    });

    it('answers 422 for a context over 16 KiB (a message over 64 KiB is truncated, not refused: test/error-tracker.test.ts)', async () => {
      const body = JSON.stringify({ error_class: 'TypeError', context: { blob: 'x'.repeat(16_384) } });
      assertError(await post(body), 422, '{"errors":{"context":["is too large (maximum is 16384 bytes as JSON)"]}}');
    });

    it('answers 413 for a body over 1 MiB', async () => {
      const body = JSON.stringify({ error_class: 'TypeError', message: 'x'.repeat(1_048_576) });
      assertError(await post(body), 413, TOO_LARGE);
    });
  });

  describe('XML request bodies', () => {
    it('answers 422 for XML with an unclosed element', async () => {
      assertError(await post('<infrastructure_error><error_class>TypeError</error_class>', 'application/xml'), 422, NOT_XML);
    });

    it('answers 422 for XML with mismatched tags', async () => {
      assertError(await post('<infrastructure_error><error_class>TypeError</message></infrastructure_error>', 'application/xml'), 422, NOT_XML);
    });

    it('answers 422 in XML on an .xml path', async () => {
      const res = await post('<infrastructure_error><a></infrastructure_error>', 'application/xml', ERRORS_XML);
      assertError(res, 422, xmlErrors('Request body is not well-formed XML'), XML_TYPE);
    });

    it('answers 422 for XML with a <!DOCTYPE>', async () => {
      const body = '<?xml version="1.0"?><!DOCTYPE infrastructure_error><infrastructure_error><error_class>X</error_class></infrastructure_error>';
      assertError(await post(body, 'application/xml'), 422, NO_DTD);
    });

    it('answers 422 for XML with an <!ENTITY> (no entity expansion)', async () => {
      const body =
        '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>' +
        '<infrastructure_error><error_class>&b;</error_class></infrastructure_error>';
      assertError(await post(body, 'application/xml'), 422, NO_DTD);
    });

    it('answers 422 for an external entity (no XXE)', async () => {
      const body = '<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><infrastructure_error><error_class>&xxe;</error_class></infrastructure_error>';
      assertError(await post(body, 'text/xml'), 422, NO_DTD);
    });

    it('answers 422 for XML nested 40 deep', async () => {
      const body = `<infrastructure_error>${'<a>'.repeat(39)}${'</a>'.repeat(39)}</infrastructure_error>`;
      assertError(await post(body, 'application/xml'), 400, TOO_DEEP);
    });

    it('answers 422 naming each field that holds elements instead of text', async () => {
      const body = '<infrastructure_error><error_class><a>1</a></error_class><message><b/><c/></message></infrastructure_error>';
      assertError(await post(body, 'application/xml'), 422, '{"errors":{"error_class":["must be a string"],"message":["must be a string"]}}');
    });

    it('answers 413 for an XML body over 1 MiB, in XML on an .xml path', async () => {
      const body = `<infrastructure_error><error_class>X</error_class><message>${'x'.repeat(1_048_576)}</message></infrastructure_error>`;
      const res = await post(body, 'application/xml', ERRORS_XML);
      assertError(res, 413, xmlErrors('Request body is larger than the limit of 1048576 bytes'), XML_TYPE);
    });
  });

  describe('content types', () => {
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      it(`answers 415 for a POST with Content-Type ${contentType}`, async () => {
        assertError(await post('error_class=TypeError', contentType), 415, UNSUPPORTED);
      });
    }
  });

  describe('Content-Type with an empty body, as OnApp clients send on every request', () => {
    it('GET with Content-Type: application/json is answered normally', async () => {
      const res = await asAdmin('/version.json', { 'content-type': 'application/json', accept: 'application/json' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.body, '{"version":"6.7"}');
    });

    it('GET with Content-Type: application/xml is answered normally', async () => {
      const res = await asAdmin('/users.xml?', { 'content-type': 'application/xml', accept: 'application/xml' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], XML_TYPE);
    });

    it('DELETE with Content-Type: application/json and an empty body is not a parsing error', async () => {
      const res = await t.app.inject({
        method: 'DELETE',
        url: '/users/999999.json',
        headers: { authorization: t.adminAuth, 'content-type': 'application/json', accept: 'application/json' },
      });
      assertError(res, 404, NOT_FOUND);
    });

    it('DELETE with a JSON body such as {"force": 1} is not a parsing error', async () => {
      const res = await t.app.inject({
        method: 'DELETE',
        url: '/users/999999.json',
        headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
        payload: '{"force": 1}',
      });
      assertError(res, 404, NOT_FOUND);
    });
  });

  describe('afterwards', () => {
    it('recorded no infrastructure error: a 4xx is never recorded', async () => {
      const rows = await t.database.db.selectFrom('infrastructure_errors').selectAll().execute();
      assert.deepEqual(rows, []);
    });
  });
});
