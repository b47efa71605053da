import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { createTestApp, type TestApp } from './support/app.js';
import { get } from './support/http.js';
import { secondsText } from '../src/http/common-headers.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RUNTIME = /^\d+\.\d{6}$/;
const WEAK_ETAG = /^W\/"[0-9a-f]{40}"$/;
const REVALIDATE = 'max-age=0, private, must-revalidate';
const NOT_FOUND = '{"errors":{"base":["Resource not found"]}}';

/** A request answered with each status the common headers must appear on (docs/api.md#response-headers). */
const REQUEST_FOR: Record<string, (t: TestApp) => InjectOptions> = {
  '200 OK': (t) => ({ url: '/version.json', headers: { authorization: t.adminAuth } }),
  '401 Unauthorized': () => ({ url: '/version.json' }),
  '404 Not Found': (t) => ({ url: '/no_such_thing.json', headers: { authorization: t.adminAuth } }),
  '406 Not Acceptable': (t) => ({ url: '/version.yaml', headers: { authorization: t.adminAuth } }),
  '422 Unprocessable Entity': (t) => ({ url: '/users.json?page=0', headers: { authorization: t.adminAuth } }),
};

describe('headers on every response', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const send = (status: string, extraHeaders: Record<string, string> = {}): Promise<LightMyRequestResponse> => {
    const request = (REQUEST_FOR[status] as (t: TestApp) => InjectOptions)(t);
    return t.app.inject({ ...request, headers: { ...(request.headers as Record<string, string> | undefined), ...extraHeaders } });
  };

  for (const status of Object.keys(REQUEST_FOR)) {
    describe(`a ${status} response`, () => {
      it('has the HTTP status it names in its Status header', async () => {
        const res = await send(status);
        assert.equal(`${res.statusCode} ${res.statusMessage}`, status);
        assert.equal(res.headers.status, status);
      });

      it('has X-Runtime in seconds with six decimals', async () => {
        const res = await send(status);
        assert.match(String(res.headers['x-runtime']), RUNTIME);
      });

      it('keeps a well-formed incoming X-Request-Id', async () => {
        const res = await send(status, { 'x-request-id': 'client-Req_42@edge' });
        assert.equal(res.headers['x-request-id'], 'client-Req_42@edge');
      });

      it('has a fresh UUID as X-Request-Id when none came in', async () => {
        const res = await send(status);
        assert.match(String(res.headers['x-request-id']), UUID);
      });
    });
  }

  it('gives each request its own fresh X-Request-Id', async () => {
    const first = await send('200 OK');
    const second = await send('200 OK');
    assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id']);
  });

  it('keeps an incoming X-Request-Id of exactly 255 characters', async () => {
    const id = 'a'.repeat(255);
    const res = await send('200 OK', { 'x-request-id': id });
    assert.equal(res.headers['x-request-id'], id);
  });

  it('replaces an X-Request-Id of 256 characters with a UUID', async () => {
    const res = await send('200 OK', { 'x-request-id': 'a'.repeat(256) });
    assert.match(String(res.headers['x-request-id']), UUID);
  });

  it('replaces an X-Request-Id with a space in it with a UUID', async () => {
    const res = await send('200 OK', { 'x-request-id': 'has space' });
    assert.match(String(res.headers['x-request-id']), UUID);
  });

  it('replaces an empty X-Request-Id with a UUID', async () => {
    const res = await send('200 OK', { 'x-request-id': '' });
    assert.match(String(res.headers['x-request-id']), UUID);
  });

  it('replaces an X-Request-Id with characters outside [A-Za-z0-9_@-] with a UUID', async () => {
    const res = await send('200 OK', { 'x-request-id': 'abc/../def' });
    assert.match(String(res.headers['x-request-id']), UUID);
  });

  it('has an X-Runtime that measures the request (a password check takes more than zero seconds)', async () => {
    // Basic authentication runs an argon2id verification (19 MiB of memory): never 0.000000 seconds.
    const res = await send('200 OK');
    assert.match(String(res.headers['x-runtime']), RUNTIME);
    assert.notEqual(res.headers['x-runtime'], '0.000000');
  });
});

describe('conditional GET', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  const asAdmin = (url: string, headers: Record<string, string> = {}) => get(t.app, url, { authorization: t.adminAuth, ...headers });

  it('gives a 200 GET a weak ETag and Cache-Control: max-age=0, private, must-revalidate', async () => {
    const res = await asAdmin('/version.json');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers.etag), WEAK_ETAG);
    assert.equal(res.headers['cache-control'], REVALIDATE);
  });

  it('gives the same body the same ETag', async () => {
    const first = await asAdmin('/users.json');
    const second = await asAdmin('/users.json');
    assert.equal(first.body, second.body);
    assert.equal(first.headers.etag, second.headers.etag);
  });

  it('gives the JSON and the XML form of one resource different ETags', async () => {
    const json = await asAdmin('/version.json');
    const xml = await asAdmin('/version.xml');
    assert.notEqual(json.headers.etag, xml.headers.etag);
  });

  it('answers 304 with an empty body to an If-None-Match equal to the ETag', async () => {
    const etag = String((await asAdmin('/version.json')).headers.etag);
    const res = await asAdmin('/version.json', { 'if-none-match': etag });
    assert.equal(res.statusCode, 304);
    assert.equal(res.body, '');
    assert.equal(res.headers.etag, etag);
    assert.equal(res.headers.status, '304 Not Modified');
  });

  it('answers 304 to an If-None-Match holding the opaque tag without W/', async () => {
    const etag = String((await asAdmin('/version.json')).headers.etag);
    const res = await asAdmin('/version.json', { 'if-none-match': etag.slice(2) });
    assert.equal(res.statusCode, 304);
    assert.equal(res.body, '');
  });

  it('answers 304 to an If-None-Match list that contains the ETag', async () => {
    const etag = String((await asAdmin('/version.json')).headers.etag);
    const res = await asAdmin('/version.json', { 'if-none-match': `W/"0000000000000000000000000000000000000000", ${etag}, "other"` });
    assert.equal(res.statusCode, 304);
    assert.equal(res.body, '');
  });

  it('answers 304 to If-None-Match: *', async () => {
    const res = await asAdmin('/version.json', { 'if-none-match': '*' });
    assert.equal(res.statusCode, 304);
    assert.equal(res.body, '');
  });

  it('keeps the common headers on a 304', async () => {
    const res = await asAdmin('/version.json', { 'if-none-match': '*', 'x-request-id': 'revalidate-1' });
    assert.equal(res.headers['x-request-id'], 'revalidate-1');
    assert.match(String(res.headers['x-runtime']), RUNTIME);
    assert.equal(res.headers['cache-control'], REVALIDATE);
  });

  it('answers 200 with the full body to an If-None-Match that does not match', async () => {
    const res = await asAdmin('/version.json', { 'if-none-match': 'W/"0000000000000000000000000000000000000000"' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"version":"6.7"}');
    assert.match(String(res.headers.etag), WEAK_ETAG);
  });

  it('gives an error Cache-Control: no-cache and no ETag', async () => {
    const res = await asAdmin('/no_such_thing.json');
    assert.equal(res.statusCode, 404);
    assert.equal(res.body, NOT_FOUND);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers.etag, undefined);
  });

  it('gives a 401 Cache-Control: no-cache', async () => {
    const res = await t.app.inject({ url: '/version.json' });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers.etag, undefined);
  });

  it('gives a 422 Cache-Control: no-cache', async () => {
    const res = await asAdmin('/users.json?per_page=0');
    assert.equal(res.statusCode, 422);
    assert.equal(res.headers['cache-control'], 'no-cache');
    assert.equal(res.headers.etag, undefined);
  });

  it('never answers an error with 304, even to If-None-Match: *', async () => {
    const res = await asAdmin('/no_such_thing.json', { 'if-none-match': '*' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.body, NOT_FOUND);
  });

  it('changes the ETag when the data changes, and the old one no longer matches', async () => {
    const before = await asAdmin('/users.json');
    await t.addUsers(1);
    const afterAdding = await asAdmin('/users.json');
    assert.equal(afterAdding.headers['x-total'], String(Number(before.headers['x-total']) + 1));
    assert.notEqual(afterAdding.headers.etag, before.headers.etag);
    const revalidated = await asAdmin('/users.json', { 'if-none-match': String(before.headers.etag) });
    assert.equal(revalidated.statusCode, 200);
    assert.equal(revalidated.body, afterAdding.body);
  });
});

describe('X-Runtime', () => {
  it('writes the seconds with six decimals, rounded to the microsecond, as toFixed(6) does', () => {
    const millis = [0, 0.0004, 0.0006, 0.001, 0.0123, 0.4567, 1, 9.999, 12.3456789, 99.9996, 100.0004, 999.9999996, 1000, 1234.5678, 59_999.9999, 123_456.789];
    assert.deepEqual(millis.map(secondsText), millis.map((ms) => (ms / 1000).toFixed(6)));
    assert.deepEqual(millis.map(secondsText).slice(0, 6), ['0.000000', '0.000000', '0.000001', '0.000001', '0.000012', '0.000457']);
  });
});
