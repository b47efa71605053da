import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { XMLValidator } from 'fast-xml-parser';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp, listenLocally } from './support/app.js';
import { login } from './support/http.js';
import { validateResponses } from './support/response-validation.js';

// Property-based fuzzing of the whole app, bounded and seeded so every run sends the same requests.
// Whatever arrives, cmi answers a 4xx or a success, never a 5xx and never a fault (docs/api.md#errors),
// in the format the request asked for (docs/api.md#formats), with the headers every answer carries.

// FUZZ_SEED and FUZZ_RUNS explore further by hand; without them every run is the same.
const SEED = Number(process.env.FUZZ_SEED ?? 42);
const RUNS = Number(process.env.FUZZ_RUNS ?? 1500);
const JSON_TYPE = 'application/json; charset=utf-8';
const XML_TYPE = 'application/xml; charset=utf-8';
const ERRORS_PATH = '/sysadmin_tools/infrastructure/errors';

interface FuzzRequest {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS';
  /** The request target as sent: path, pagination segments, query. */
  url: string;
  /** The format the path or Accept asks for; undefined for the path arbitrary's free-form paths. */
  format: 'json' | 'xml' | undefined;
  headers: Record<string, string>;
  payload: string | undefined;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

// ---- paths -------------------------------------------------------------------------------------

/** One character of a path segment, never `.`, `/`, `?` or `#` (so the extension stays the fuzzer's). */
const segmentChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...'abcxyzAZ019_-~'.split('')) },
  { weight: 2, arbitrary: fc.integer({ min: 0, max: 255 }).map((byte) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`) },
  { weight: 2, arbitrary: fc.constantFrom('%00', '%', '%zz', '%2e', '%2F', '%C3%A9', '%FF', '%E2%82', ':', '@', '!', '$', '&', "'", '(', ')', '*', '+', ',', ';', '=') },
);
// fastify's inject resolves `%2e` and `%2e%2e` segments as `.` and `..` (WHATWG URL), sockets do not: left out.
const word = fc
  .array(segmentChar, { minLength: 1, maxLength: 8 })
  .map((chars) => chars.join(''))
  .filter((segment) => !/^(?:%2e){1,2}$/i.test(segment));
const id = fc.oneof(fc.constantFrom('2', '3', '999', '0', '01', '-1', '2147483647', '2147483648', '99999999999999999999', '1e3', '0x10', 'a'.repeat(250)), fc.nat().map(String), word);
/** What may follow a user's id: its actions (docs/api.md#users). */
const action = fc.constantFrom('', '', '', '/suspend', '/activate', '/make_new_api_key', '/x');
const resource = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('/users', '/users', ERRORS_PATH, ERRORS_PATH, '/version') },
  fc.constantFrom('/users', '/version', '/health/live', '/health/ready', '/session', ERRORS_PATH, '/sysadmin_tools', '/', '/users/'),
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom('/users/', `${ERRORS_PATH}/`), id, action).map(([path, value, then]) => path + value + then) },
  fc.array(word, { minLength: 1, maxLength: 4 }).map((words) => `/${words.join('/')}`),
);
const extension = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom('', '.json', '.xml') },
  fc.constantFrom('.html', '.JSON', '.xml2', '.', '.%00', '.js%6Fn'),
);
const pagination: fc.Arbitrary<Array<[string, string]>> = fc.oneof({ weight: 3, arbitrary: fc.constant<Array<[string, string]>>([]) }, fc.array(
  fc.tuple(fc.constantFrom('page', 'per_page'), fc.oneof(fc.nat({ max: 3000 }).map(String), word, fc.constantFrom('0', '-1', '%00', '1000', '1001', '2147483647', '2147483648', ''))),
  { minLength: 1, maxLength: 3 },
));
const query = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc
      .array(fc.tuple(fc.constantFrom('page', 'per_page', 'x', 'page[]', ''), fc.oneof(word, fc.nat().map(String), fc.constantFrom('', '%00', '1%00', '-1', '1&page=2', '2147483647', '1000', '%C3%A9'))), { minLength: 1, maxLength: 3 })
      .map((pairs) => `?${pairs.map(([name, value]) => `${name}=${value}`).join('&')}`),
  },
  { weight: 1, arbitrary: fc.constantFrom('?', '?page', '?&&', '?%00', '?per_page=1000&per_page=1') },
);

// ---- headers -----------------------------------------------------------------------------------

const accept = fc.constantFrom(
  undefined,
  'application/json',
  'application/xml',
  'text/xml',
  'application/xml, application/json',
  'application/json;q=0.1, application/xml',
  '*/*',
  'text/html',
  'application/xml;charset=utf-16',
  'x',
  'application/jsoné',
  'text/xml\t, application/json',
);
/** `auto`: the one that fits the body (or none without one). */
const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('auto') },
  fc.constantFrom(
    undefined,
    'application/json',
    'application/json; charset=utf-8',
    'application/json; charset=UTF-8',
    'application/json; charset="utf-8"',
    'application/json; charset=iso-8859-1',
    'application/json; charset=utf-16',
    'application/json; foo',
    'application/xml',
    'text/xml; charset=utf-8',
    'application/xml; charset=latin1',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/x-www-form-urlencoded',
    ';',
    'application/',
  ),
  word.map((value) => `application/${value}`),
);

/** Valid credentials, others' garbage, and some that are nearly right. */
function authorization(t: TestApp) {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constant(t.adminAuth) },
    { weight: 2, arbitrary: fc.constant(t.aliceAuth) },
    { weight: 2, arbitrary: fc.constant(undefined) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40, unit: 'binary' }).map((text) => `Basic ${base64(text)}`) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        `Basic ${base64('admin:wrong-password')}`,
        `Basic ${base64('ad\u0000min:admin-password')}`,
        `Basic ${base64('admin')}`,
        `Basic ${base64(':admin-password')}`,
        'Basic',
        'Basic !!!',
        'Bearer token',
        '',
        `basic   ${base64('admin:admin-password')}`,
        `Basic ${base64(`${'a'.repeat(300)}:x`)}`,
      ),
    },
    { weight: 1, arbitrary: word.map((value) => `Basic ${value}`) },
  );
}
/** No cookie, a real session (`token`, from a login), that session tampered with, or garbage. */
const cookie = (token: string) =>
  fc.constantFrom(
    undefined,
    undefined,
    undefined,
    `_cmi_session=${token}`,
    `_cmi_session=${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`,
    `_cmi_session=${token.replace(/^1\./, '2.')}`,
    '_cmi_session=abc',
    '_cmi_session=',
    'x=y; _cmi_session=a.b.c',
    '_cmi_session=%00',
    ';;;',
  );
const requestId = fc.oneof(fc.constant(undefined), word, fc.constantFrom('fuzz-1', 'a'.repeat(300), ''));

// ---- bodies ------------------------------------------------------------------------------------

const VALID_USER = { login: 'fuzzed', email: 'fuzzed@example.com', password: 'fuzz-password', first_name: 'F', last_name: 'Z', time_zone: 'UTC', locale: 'en', role: 'user' };
const VALID_REPORT = { error_class: 'Timeout', message: 'took too long', backtrace: 'app/models/vm.rb:12' };

const text = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ maxLength: 20, unit: 'binary' }),
  fc.constantFrom('', ' ', 'a\u0000b', '\uD800', 'x'.repeat(300), '&#0;', '<a>', ']]>', 'constructor', '__proto__', 'admin', 'ALICE@example.com'),
);

function escapeXml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** `value` as XML the way OnApp clients write records: nested elements, nil="true" for null. */
function toXml(name: string, value: unknown): string {
  if (value === null) return `<${name} nil="true"/>`;
  if (Array.isArray(value)) return `<${name} type="array">${value.map((item) => toXml('item', item)).join('')}</${name}>`;
  if (typeof value === 'object') return `<${name}>${Object.entries(value).map(([key, inner]) => toXml(key, inner)).join('')}</${name}>`;
  return `<${name}>${escapeXml(typeof value === 'string' ? value : JSON.stringify(value))}</${name}>`;
}

/** A valid user or report with one field changed, dropped or added, wrapped in its root or not. */
const mutatedRecord = fc
  .record({
    record: fc.constantFrom<[string, Record<string, string>]>(['user', VALID_USER], ['infrastructure_error', VALID_REPORT]),
    field: fc.constantFrom(...Object.keys(VALID_USER), ...Object.keys(VALID_REPORT), 'constructor', '__proto__', 'extra'),
    change: fc.oneof(fc.constant<'drop'>('drop'), text, fc.jsonValue({ maxDepth: 2 })),
    unique: fc.nat({ max: 1_000_000 }),
    wrapped: fc.boolean(),
    xml: fc.boolean(),
  })
  .map(({ record: [root, valid], field, change, unique, wrapped, xml }) => {
    const fields: Record<string, unknown> = { ...valid };
    if (root === 'user') Object.assign(fields, { login: `fz${unique}`, email: `fz${unique}@example.com` });
    if (change === 'drop') delete fields[field];
    else Object.defineProperty(fields, field, { value: change, enumerable: true, configurable: true, writable: true });
    if (xml) return { payload: toXml(root, fields), xml };
    return { payload: JSON.stringify(wrapped ? { [root]: fields } : fields), xml };
  });

const xmlName = fc.constantFrom('user', 'login', 'email', 'password', 'infrastructure_error', 'error_class', 'constructor', '__proto__', 'prototype', 'toString', 'a', 'x:y', 'item');
const xmlText = fc.oneof(text.map(escapeXml), fc.constantFrom('&#0;', '&#x41;', '&amp;#65;', '&bogus;', '<![CDATA[x]]>', '&#x110000;', '&#xD800;', '&lt;', '<!-- c -->'));
const xmlElement: fc.Arbitrary<string> = fc.letrec<{ element: string }>((tie) => ({
  element: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(xmlName, xmlText).map(([name, value]) => `<${name}>${value}</${name}>`),
    fc.tuple(xmlName, fc.constantFrom(' nil="true"', ' type="integer"', ' a="&#0;"', '')).map(([name, attribute]) => `<${name}${attribute}/>`),
    fc.tuple(xmlName, fc.array(tie('element'), { maxLength: 4 })).map(([name, children]) => `<${name}>${children.join('')}</${name}>`),
  ),
})).element;
const xmlDocument = fc.tuple(fc.constantFrom('', '<?xml version="1.0" encoding="UTF-8"?>\n', '<?xml version="1.0"?>'), xmlElement).map(([declaration, root]) => declaration + root);

/** A text cut, or with a character put in, at some place. */
const mutatedText = (source: fc.Arbitrary<string>) =>
  fc.tuple(source, fc.nat(), fc.constantFrom('', '"', '<', '>', '&', '\u0000', '{', '}', ',', '\uFEFF', 'é')).map(([whole, at, inserted]) => {
    const place = whole.length === 0 ? 0 : at % whole.length;
    return inserted === '' ? whole.slice(0, place) : whole.slice(0, place) + inserted + whole.slice(place);
  });

const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ payload: undefined, xml: false }) },
  { weight: 3, arbitrary: mutatedRecord },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }).map((payload) => ({ payload, xml: false })) },
  { weight: 2, arbitrary: xmlDocument.map((payload) => ({ payload, xml: true })) },
  { weight: 2, arbitrary: mutatedText(mutatedRecord.map(({ payload }) => payload)).map((payload) => ({ payload, xml: false })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 60, unit: 'binary' }).map((payload) => ({ payload, xml: false })) },
);

/** Bodies deep or expensive to read: nested JSON, XML nested past its limit, `/>` in attribute values. */
const deepBody = fc.integer({ min: 1, max: 5_000 }).chain((levels) =>
  fc.constantFrom(
    `${'['.repeat(levels)}${']'.repeat(levels)}`,
    `{"context":{"a":${'['.repeat(levels)}${']'.repeat(levels)}}}`,
    `<user>${'<a x="/>">'.repeat(levels)}${'</a>'.repeat(levels)}</user>`,
    `<user>${'<a>'.repeat(levels)}`,
  ));

// ---- requests ----------------------------------------------------------------------------------

/** What a path written as `base + ext` asks for, as docs/api.md#formats describes. */
function requestedFormat(base: string, ext: string, acceptHeader: string | undefined): 'json' | 'xml' {
  if (ext !== '' && !base.endsWith('/')) return ext === '.xml' ? 'xml' : 'json';
  const value = acceptHeader ?? '';
  const xml = value.search(/application\/xml|text\/xml/);
  const json = value.indexOf('application/json');
  return xml !== -1 && (json === -1 || xml < json) ? 'xml' : 'json';
}

/** Whether a request would change or remove the administrator the fuzzer authenticates as (id 1). */
function touchesAdministrator(request: FuzzRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return false;
  let path = request.url;
  try {
    path = decodeURIComponent(path);
  } catch {
    // Undecodable: the router answers 404 before any handler.
  }
  return /^\/users\/0*1(?:[./?]|$)/.test(path);
}

function fuzzRequest(t: TestApp, token: string): fc.Arbitrary<FuzzRequest> {
  const structured = fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
      base: resource,
      ext: extension,
      pages: pagination,
      query,
      accept,
      contentType,
      authorization: authorization(t),
      cookie: cookie(token),
      requestId,
      body,
    })
    .map(({ method, base, ext, pages, query: search, accept: acceptHeader, contentType: type, authorization: auth, cookie: cookieHeader, requestId: rid, body: { payload, xml } }) => {
      const headers: Record<string, string> = {};
      const set = (name: string, value: string | undefined) => value !== undefined && (headers[name] = value);
      set('accept', acceptHeader);
      set('content-type', type !== 'auto' ? type : payload === undefined ? undefined : xml ? 'application/xml' : 'application/json');
      set('authorization', auth);
      set('cookie', cookieHeader);
      set('x-request-id', rid);
      const url = `${base}${ext}${pages.map(([name, value]) => `/${name}/${value}`).join('')}${search}`;
      return { method, url, format: requestedFormat(base, ext, acceptHeader), headers, payload };
    });
  return structured.filter((request) => !touchesAdministrator(request));
}

// ---- properties --------------------------------------------------------------------------------

/** Never a 5xx; X-Request-Id and Status always; a body that is well-formed in the format asked for. */
function assertWellAnswered(request: FuzzRequest, answer: Answer): void {
  const what = `${request.method} ${request.url} ${JSON.stringify(request.headers)} ${JSON.stringify(request.payload)} -> ${answer.status} ${answer.body.slice(0, 300)}`;
  assert.ok(answer.status >= 200 && answer.status < 500, what);
  assert.ok(answer.headers['x-request-id'], `X-Request-Id: ${what}`);
  assert.match(String(answer.headers.status), new RegExp(`^${answer.status} `), `Status: ${what}`);
  if (request.method === 'HEAD' || answer.status === 204 || answer.status === 304) return;
  const type = answer.headers['content-type'];
  if (request.format !== undefined) assert.equal(type, request.format === 'xml' ? XML_TYPE : JSON_TYPE, `format: ${what}`);
  if (type === JSON_TYPE) assert.doesNotThrow(() => JSON.parse(answer.body) as unknown, `JSON: ${what}`);
  else if (type === XML_TYPE) assert.equal(XMLValidator.validate(answer.body), true, `XML: ${what}`);
  else assert.fail(`Content-Type ${String(type)}: ${what}`);
}

/** One request over a real socket, written by hand (any target, any header value), read to the end. */
function overSocket(port: number, request: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = request.payload === undefined ? Buffer.alloc(0) : Buffer.from(request.payload, 'utf8');
    const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    const length = payload.length > 0 || request.method === 'POST' || request.method === 'PUT' ? `content-length: ${payload.length}\r\n` : '';
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const headEnd = raw.indexOf('\r\n\r\n');
      const [statusLine = '', ...headerLines] = raw.slice(0, headEnd).split('\r\n');
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
      if (headEnd === -1 || !status) return reject(new Error(`connection ended without an answer: ${JSON.stringify(raw.slice(0, 200))}`));
      const parsed: Answer['headers'] = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        parsed[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      socket.destroy();
      resolve({ status: Number(status[1]), headers: parsed, body: raw.slice(headEnd + 4) });
    });
    // Not half-closed after the body: Node's server drops a request whose client ended its side (httpAllowHalfOpen).
    socket.write(`${request.method} ${request.url} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n${headers}${length}\r\n`);
    socket.write(payload);
  });
}

describe('fuzzing paths, query strings, headers and bodies (fast-check, seeded)', () => {
  let t: TestApp;
  let app: FastifyInstance;
  /** Log lines at level error or above: every fault writes one (docs/operations.md#log-storms). */
  const errorLines: string[] = [];
  /** Reports cmi acknowledged with a 2xx: all that infrastructure_errors may count. */
  let acknowledgedReports = 0;
  /** A session of alice's (docs/security.md#sessions-without-storage). */
  let token: string;

  before(async () => {
    // Wrong passwords are part of the fuzz; the lockout (tested elsewhere) must not turn them into 429s for the valid ones.
    t = await createTestApp({ CMI_LOCKOUT_MAX_FAILURES: '1000000' });
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
          if ((JSON.parse(line) as { level: number }).level >= 50) errorLines.push(line);
        }
        done();
      },
    });
    app = await buildApp({ config: t.config, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: { level: 'error', stream } });
    token = await login(app, t.aliceAuth);
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  const noted = (request: FuzzRequest, answer: Answer) => {
    const path = request.url.split('?')[0] as string;
    if (request.method === 'POST' && answer.status < 300 && /^\/sysadmin_tools\/infrastructure\/errors(\.json|\.xml)?$/.test(path)) acknowledgedReports += 1;
    assert.deepEqual(errorLines, [], `no fault logged: ${request.method} ${request.url}`);
  };

  it('answers every injected request well, and no fault happens', async () => {
    await fc.assert(
      fc.asyncProperty(fuzzRequest(t, token), async (request) => {
        const res = await app.inject({ method: request.method, url: request.url, headers: request.headers, payload: request.payload });
        const answer = { status: res.statusCode, headers: res.headers, body: res.body };
        assertWellAnswered(request, answer);
        noted(request, answer);
      }),
      { seed: SEED, numRuns: RUNS, includeErrorInReport: true },
    );
  });

  it('answers every request over a real socket with a whole HTTP answer, and no fault happens', async () => {
    const port = await listenLocally(app);
    await fc.assert(
      fc.asyncProperty(fuzzRequest(t, token), async (request) => {
        const answer = await overSocket(port, request);
        assertWellAnswered(request, answer);
        noted(request, answer);
      }),
      { seed: SEED + 1, numRuns: Math.ceil(RUNS / 8), includeErrorInReport: true },
    );
  });

  it('answers a request without valid credentials 401 whatever its path, method and body: no body is read', async () => {
    const unauthenticated = fc
      .record({
        method: fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE'),
        base: resource,
        ext: fc.constantFrom('.json', '.xml', ''),
        credentials: fc.constantFrom<Record<string, string>>({}, { authorization: 'Bearer x' }, { cookie: '_cmi_session=stale' }),
        contentType: fc.constantFrom('application/json', 'application/xml', 'text/xml', 'text/plain'),
        payload: fc.oneof(body.map(({ payload }) => (typeof payload === 'string' ? payload : payload === undefined ? '' : JSON.stringify(payload))), deepBody),
      })
      // Not the URLs the router cannot take apart (bad percent-encoding, a segment over 200 characters):
      // those answer 404 before any credentials (docs/limits.md#paths-and-ids), and read no body either.
      .filter(({ base }) => {
        try {
          decodeURIComponent(base);
        } catch {
          return false;
        }
        return base.split('/').every((segment) => segment.length <= 200);
      });
    await fc.assert(
      fc.asyncProperty(unauthenticated, async ({ method, base, ext, credentials, contentType: type, payload }) => {
        const request = { method, url: `${base}${ext}`, format: requestedFormat(base, ext, undefined), headers: { 'content-type': type, ...credentials }, payload };
        const res = await app.inject({ method, url: request.url, headers: request.headers, payload });
        const answer = { status: res.statusCode, headers: res.headers, body: res.body };
        assert.equal(res.statusCode, 401, `${method} ${request.url} ${type} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
        assert.equal(res.headers['www-authenticate'], 'Basic realm="cmi"');
        assertWellAnswered(request, answer);
        noted(request, answer);
      }),
      { seed: SEED + 2, numRuns: Math.ceil(RUNS / 4), includeErrorInReport: true },
    );
  });

  it('answers every report 201, 200 or 422 whatever its fields and the depth and size of its context, and no fault happens', async () => {
    const reports = fc.record({
      ext: fc.constantFrom('.json', '.xml'),
      error_class: fc.oneof(fc.constant('Fuzzed'), text, fc.json({ maxDepth: 2 }).map((value) => JSON.parse(value) as unknown)),
      message: fc.oneof(text, fc.constant(undefined)),
      // The context as JSON text: nesting this deep would overflow JSON.stringify in the test itself.
      context: fc.oneof(
        fc.constant(undefined),
        fc.json({ maxDepth: 4 }),
        fc.integer({ min: 1, max: 20_000 }).map((levels) => `{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`),
        fc.integer({ min: 1, max: 40_000 }).map((size) => `{"a":"${'x'.repeat(size)}"}`),
      ),
    });
    await fc.assert(
      fc.asyncProperty(reports, async ({ ext, ...fields }) => {
        const xml = ext === '.xml';
        const { context, ...plain } = fields;
        const defined = Object.fromEntries(Object.entries(plain).filter(([, value]) => value !== undefined));
        const payload = xml
          ? toXml('infrastructure_error', defined).replace(/<\/infrastructure_error>$/, `${context === undefined ? '' : `<context>${escapeXml(context)}</context>`}</infrastructure_error>`)
          : `${JSON.stringify(defined).slice(0, -1)}${context === undefined ? '' : `${Object.keys(defined).length > 0 ? ',' : ''}"context":${context}`}}`;
        const url = `/sysadmin_tools/infrastructure/errors${ext}`;
        const request = { method: 'POST' as const, url, format: xml ? 'xml' as const : 'json' as const, headers: { authorization: t.adminAuth, 'content-type': xml ? 'application/xml' : 'application/json' }, payload };
        const res = await app.inject({ method: 'POST', url, headers: request.headers, payload });
        const answer = { status: res.statusCode, headers: res.headers, body: res.body };
        assert.ok([200, 201, 422].includes(res.statusCode), `${payload.slice(0, 200)} -> ${res.statusCode} ${res.body.slice(0, 200)}`);
        assertWellAnswered(request, answer);
        noted(request, answer);
      }),
      { seed: SEED + 3, numRuns: Math.ceil(RUNS / 8), includeErrorInReport: true },
    );
  });

  it('records nothing but the reports it acknowledged', async () => {
    const rows = await t.database.db.selectFrom('infrastructure_errors').select('counter').execute();
    assert.equal(rows.reduce((sum, row) => sum + row.counter, 0), acknowledgedReports);
  });
});

describe('found by fuzzing', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  // The body of a request for a path no route serves was parsed before its 404 gate ran, so its error
  // reached the error handler with no format read and no start time; now the gate answers before any body
  // is read (docs/limits.md#request-bodies).
  for (const method of ['PUT', 'OPTIONS'] as const) {
    it(`${method} with a bad body on a path no route serves is answered in the format the path asks for (docs/api.md#formats)`, async () => {
      const res = await t.app.inject({ method, url: '/nothing/here.xml', headers: { authorization: t.adminAuth, 'content-type': 'application/json' }, payload: 'x' });
      assert.ok(res.statusCode === 404 || res.statusCode === 422, `${res.statusCode}`);
      assert.equal(res.headers['content-type'], XML_TYPE);
      assert.equal(XMLValidator.validate(res.body), true);
      assert.match(res.body, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<errors>\n {2}<error>/);
      assert.ok(Number(res.headers['x-runtime']) < 1, `X-Runtime ${String(res.headers['x-runtime'])} counts from the request's start`);
    });
  }
});
