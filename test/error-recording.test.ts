import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from './support/app.js';
import { get } from './support/http.js';

const BASE = '/sysadmin_tools/infrastructure/errors';
const BACKTRACE = "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'";
const SHIFTED = "src/store/users.ts:57:in 'findUser'\nsrc/server/routes/users.ts:21:in 'list'";
// The rule, written out independently of the code: class, then frames without line numbers.
const EXPECTED_FINGERPRINT = createHash('sha256')
  .update("TypeError\nsrc/store/users.ts:in 'findUser'\nsrc/server/routes/users.ts:in 'list'")
  .digest('hex');

describe('error recording', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const post = (url: string, payload: string, contentType = 'application/json') =>
    t.app.inject({ method: 'POST', url, payload, headers: { authorization: t.adminAuth, 'content-type': contentType } });
  const asAdmin = (url: string) => get(t.app, url, { authorization: t.adminAuth, accept: 'application/json', 'content-type': 'application/json' });
  const rows = () => t.database.db.selectFrom('infrastructure_errors').selectAll().execute();

  it('records a new error reported by another component: 201 with the record and its location', async () => {
    const res = await post(
      `${BASE}.json`,
      JSON.stringify({ infrastructure_error: { error_class: 'TypeError', message: 'Cannot read properties of undefined', backtrace: BACKTRACE } }),
    );
    assert.equal(res.statusCode, 201);
    assert.equal(res.headers.location, `${BASE}/1.json`);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(
      res.body,
      JSON.stringify({
        infrastructure_error: {
          id: 1,
          backtrace: BACKTRACE,
          counter: 1,
          created_at: '2026-11-20T10:00:00+00:00',
          error_class: 'TypeError',
          fingerprint: EXPECTED_FINGERPRINT,
          message: 'Cannot read properties of undefined',
          reported: false,
          updated_at: '2026-11-20T10:00:00+00:00',
        },
      }),
    );
    assert.equal((await rows()).length, 1);
  });

  it('counts the same error at shifted lines as one: 200, counter 2, updated_at moved, created_at kept', async () => {
    t.time.advance(300);
    const res = await post(
      `${BASE}.xml`,
      JSON.stringify({ error_class: 'TypeError', message: 'Cannot read properties of undefined', backtrace: SHIFTED }),
    );
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers.location, undefined);
    assert.equal(
      res.body,
      `<?xml version="1.0" encoding="UTF-8"?>
<infrastructure_error>
  <id type="integer">1</id>
  <backtrace>${SHIFTED}</backtrace>
  <counter type="integer">2</counter>
  <created_at type="datetime">2026-11-20T10:00:00+00:00</created_at>
  <error_class>TypeError</error_class>
  <fingerprint>${EXPECTED_FINGERPRINT}</fingerprint>
  <message>Cannot read properties of undefined</message>
  <reported type="boolean">false</reported>
  <updated_at type="datetime">2026-11-20T10:05:00+00:00</updated_at>
</infrastructure_error>
`,
    );
    const stored = await rows();
    assert.equal(stored.length, 1);
    assert.equal(stored[0]?.counter, 2);
  });

  it('answers GET in JSON and XML with exactly its nine fields (docs/api.md#infrastructure-errors)', async () => {
    const json = await asAdmin(`${BASE}/1.json`);
    assert.equal(json.statusCode, 200);
    const record = (JSON.parse(json.body) as { infrastructure_error: Record<string, unknown> }).infrastructure_error;
    assert.deepEqual(Object.keys(record), [
      'id', 'backtrace', 'counter', 'created_at', 'error_class', 'fingerprint', 'message', 'reported', 'updated_at',
    ]);
    assert.equal(record.counter, 2);
    const xml = await t.app.inject({ url: `${BASE}/1.xml`, headers: { authorization: t.adminAuth, accept: 'application/xml', 'content-type': 'application/xml' } });
    assert.equal(xml.statusCode, 200);
    assert.equal(xml.headers['content-type'], 'application/xml; charset=utf-8');
    assert.match(xml.body, /^<\?xml version="1\.0" encoding="UTF-8"\?>\n<infrastructure_error>\n {2}<id type="integer">1<\/id>\n/);
    assert.match(xml.body, /<counter type="integer">2<\/counter>/);
  });

  it('takes an XML report, escaping what it echoes back', async () => {
    const res = await post(
      `${BASE}.xml`,
      '<?xml version="1.0" encoding="UTF-8"?><infrastructure_error><error_class>Net::ReadTimeout</error_class>' +
        '<message>a &lt; b &amp; "c"</message><backtrace>lib/net.rb:9:in `read\'</backtrace></infrastructure_error>',
      'application/xml',
    );
    assert.equal(res.statusCode, 201);
    assert.match(res.body, /<message>a &lt; b &amp; "c"<\/message>/);
    // Ids come from a sequence that an upsert also draws on, so they may skip; Location names the record.
    const id = /<id type="integer">(\d+)<\/id>/.exec(res.body)?.[1];
    assert.equal(res.headers.location, `${BASE}/${id}.xml`);
  });

  it('decodes XML character references and the predefined entities once, and nothing else', async () => {
    const res = await post(
      `${BASE}.json`,
      '<infrastructure_error><error_class>CharRef</error_class><message>A&#66;&#x43; &amp;#65; &#x1F600; &lt;x&gt;</message></infrastructure_error>',
      'application/xml',
    );
    assert.equal(res.statusCode, 201);
    assert.equal((JSON.parse(res.body) as { infrastructure_error: { message: string } }).infrastructure_error.message, 'ABC &#65; \u{1F600} <x>');
  });

  it('names each bad field of a report in one 422 and records nothing', async () => {
    const res = await post(`${BASE}.json`, JSON.stringify({ infrastructure_error: { message: 5, backtrace: ['x', 7] } }));
    assert.equal(res.statusCode, 422);
    assert.equal(res.body, '{"errors":{"error_class":["can\'t be blank"],"message":["must be a string"],"backtrace":["must be a string or an array of strings"]}}');
    assert.equal((await rows()).length, 3);
  });

  it('answers 404 for an unknown or non-integer id', async () => {
    for (const id of ['999', 'abc', '0', '1.5']) {
      const res = await asAdmin(`${BASE}/${id}.json`);
      assert.equal(res.statusCode, 404, id);
      assert.equal(res.body, '{"errors":{"base":["Resource not found"]}}');
    }
  });
});
