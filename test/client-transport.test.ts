import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import {
  CmiAbortError,
  CmiBadRequestError,
  CmiClient,
  CmiConnectionError,
  CmiProtocolError,
  CmiRateLimitError,
  CmiServerError,
  CmiTimeoutError,
} from '../src/client/index.js';
import { retryAfterSeconds } from '../src/client/transport.js';

/**
 * Retries, timeouts and failures of cmi/client against real node:http servers on random ports, each
 * scripted to answer one way (docs/client.md#retries-and-timeouts).
 */
const servers: Server[] = [];
after(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  }
});

type Handler = (request: IncomingMessage, response: ServerResponse, count: number) => void;

/** A server answering the n-th request (from 1) as `handler` says; `requests` counts them. */
async function scripted(handler: Handler): Promise<{ baseUrl: string; requests: () => number; times: number[] }> {
  let count = 0;
  const times: number[] = [];
  const server = createServer((request, response) => {
    count += 1;
    times.push(Date.now());
    request.resume();
    handler(request, response, count);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => count, times };
}

const VERSION = JSON.stringify({ version: '1.0' });
const ok = (response: ServerResponse, body = VERSION) => response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(body);
const status = (response: ServerResponse, code: number, headers: Record<string, string> = {}) =>
  response.writeHead(code, { 'content-type': 'application/json; charset=utf-8', 'x-request-id': `req-${code}`, ...headers }).end(JSON.stringify({ errors: { base: [`failed ${code}`] } }));

const client = (baseUrl: string, options: Partial<ConstructorParameters<typeof CmiClient>[0]> = {}) =>
  new CmiClient({ baseUrl, login: 'admin', password: 'pw', initialRetryDelay: 20, ...options });

describe('CmiClient retries', () => {
  for (const code of [408, 429, 502, 503, 504]) {
    it(`a GET answered ${code} twice, then 200, succeeds on the third try`, async () => {
      const server = await scripted((_q, response, n) => (n <= 2 ? status(response, code) : ok(response)));
      assert.equal(await client(server.baseUrl).version(), '1.0');
      assert.equal(server.requests(), 3);
    });
  }

  it('gives up after maxRetries with the last answer\'s error: status, request id, message', async () => {
    const server = await scripted((_q, response) => status(response, 503));
    const error = await client(server.baseUrl, { maxRetries: 1 }).version().catch((e: unknown) => e);
    assert.ok(error instanceof CmiServerError);
    assert.deepEqual([error.status, error.requestId, error.message, server.requests()], [503, 'req-503', '503: failed 503', 2]);
  });

  it('does not retry 500, 400 or a POST', async () => {
    const failing = await scripted((_q, response) => status(response, 500));
    await assert.rejects(client(failing.baseUrl).version(), CmiServerError);
    assert.equal(failing.requests(), 1);
    const bad = await scripted((_q, response) => status(response, 400));
    await assert.rejects(client(bad.baseUrl).version(), CmiBadRequestError);
    assert.equal(bad.requests(), 1);
    const busy = await scripted((_q, response) => status(response, 503));
    await assert.rejects(client(busy.baseUrl).users.suspend(1), CmiServerError);
    assert.equal(busy.requests(), 1);
  });

  it('waits the Retry-After seconds before the next try', async () => {
    const server = await scripted((_q, response, n) => (n === 1 ? status(response, 429, { 'retry-after': '1' }) : ok(response)));
    assert.equal(await client(server.baseUrl).version(), '1.0');
    const waited = server.times[1]! - server.times[0]!;
    assert.ok(waited >= 950 && waited < 2500, `waited ${waited} ms`);
  });

  it('waits until a Retry-After HTTP date', async () => {
    // HTTP dates have whole seconds: two seconds ahead is a wait of one to two.
    const server = await scripted((_q, response, n) =>
      n === 1 ? status(response, 503, { 'retry-after': new Date(Date.now() + 2000).toUTCString() }) : ok(response));
    assert.equal(await client(server.baseUrl).version(), '1.0');
    const waited = server.times[1]! - server.times[0]!;
    assert.ok(waited >= 900 && waited < 3000, `waited ${waited} ms`);
  });

  it('does not wait for a Retry-After beyond maxRetryDelay: the error carries it', async () => {
    const server = await scripted((_q, response) => status(response, 429, { 'retry-after': '3600' }));
    const error = await client(server.baseUrl).version().catch((e: unknown) => e);
    assert.ok(error instanceof CmiRateLimitError);
    assert.deepEqual([error.retryAfter, server.requests()], [3600, 1]);
  });

  it('backs off exponentially without Retry-After', async () => {
    const server = await scripted((_q, response, n) => (n <= 2 ? status(response, 502) : ok(response)));
    await client(server.baseUrl, { initialRetryDelay: 200 }).version();
    const [first, second] = [server.times[1]! - server.times[0]!, server.times[2]! - server.times[1]!];
    // 200 ms then 400 ms, each cut by up to a quarter of jitter.
    assert.ok(first >= 145 && first < 400, `first wait ${first} ms`);
    assert.ok(second >= 295 && second < 700, `second wait ${second} ms`);
  });

  it('retries a socket closed before the answer, then reports a connection error', async () => {
    const flaky = await scripted((request, response, n) => (n <= 2 ? request.socket.destroy() : ok(response)));
    assert.equal(await client(flaky.baseUrl).version(), '1.0');
    assert.equal(flaky.requests(), 3);
    const dead = await scripted((request) => request.socket.destroy());
    const error = await client(dead.baseUrl).version().catch((e: unknown) => e);
    assert.ok(error instanceof CmiConnectionError && !(error instanceof CmiTimeoutError), String(error));
    assert.equal(dead.requests(), 3);
  });

  it('a refused connection is a CmiConnectionError naming the server', async () => {
    const server = await scripted(() => undefined);
    const url = server.baseUrl;
    servers.pop()!.close();
    const error = await client(url, { maxRetries: 0 }).version().catch((e: unknown) => e);
    assert.ok(error instanceof CmiConnectionError);
    assert.match(error.message, new RegExp(`^cannot reach ${url}: ECONNREFUSED$`));
  });
});

describe('CmiClient timeouts and aborts', () => {
  it('each try has its own timeout: a server that hangs is a CmiTimeoutError after 1 + maxRetries tries', async () => {
    const server = await scripted(() => undefined);
    const started = Date.now();
    const error = await client(server.baseUrl, { timeout: 200, maxRetries: 1 }).version().catch((e: unknown) => e);
    assert.ok(error instanceof CmiTimeoutError, String(error));
    assert.equal(server.requests(), 2);
    assert.ok(Date.now() - started >= 400);
  });

  it('a body that stops half-way times out too', async () => {
    const server = await scripted((_q, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"version":');
    });
    await assert.rejects(client(server.baseUrl, { timeout: 200, maxRetries: 0 }).version(), CmiTimeoutError);
  });

  it('the caller\'s abort is a CmiAbortError, not a timeout, and is not retried', async () => {
    const server = await scripted(() => undefined);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const error = await client(server.baseUrl, { timeout: 5000 }).version({ signal: controller.signal }).catch((e: unknown) => e);
    assert.ok(error instanceof CmiAbortError && !(error instanceof CmiConnectionError), String(error));
    assert.equal(server.requests(), 1);
  });

  it('an abort during the wait between tries ends the call there', async () => {
    const server = await scripted((_q, response) => status(response, 503, { 'retry-after': '5' }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await assert.rejects(client(server.baseUrl).version({ signal: controller.signal }), CmiAbortError);
    assert.ok(Date.now() - started < 2000);
    assert.equal(server.requests(), 1);
  });
});

describe('CmiClient options and answers it refuses', () => {
  it('fetch and fetchOptions reach every request', async () => {
    const server = await scripted((request, response) => ok(response, JSON.stringify({ version: request.headers['x-extra'] })));
    const calls: string[] = [];
    const custom = client(server.baseUrl, {
      fetchOptions: { headers: { 'x-extra': 'from-options' } },
      fetch: (input, init) => {
        calls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
        return fetch(input, init);
      },
    });
    assert.equal(await custom.version(), 'from-options');
    assert.deepEqual(calls, [`${server.baseUrl}/version.json`]);
  });

  it('refuses an XML answer with a DOCTYPE or an entity, and a record of the wrong type', async () => {
    const server = await scripted((request, response) => {
      const body = request.url === '/version.xml'
        ? '<?xml version="1.0"?><!DOCTYPE cmi [<!ENTITY x "1.0">]><cmi><version>&x;</version></cmi>'
        : '<?xml version="1.0"?><user><id type="integer">seven</id></user>';
      response.writeHead(200, { 'content-type': 'application/xml' }).end(body);
    });
    const xml = client(server.baseUrl, { format: 'xml' });
    await assert.rejects(xml.version(), (e: unknown) => e instanceof CmiProtocolError && /DOCTYPE/.test(e.message));
    await assert.rejects(xml.users.get(7), (e: unknown) => e instanceof CmiProtocolError && /<id> is not an integer/.test(e.message));
  });

  it('a JSON record missing a field it must have is refused, naming it', async () => {
    const server = await scripted((_q, response) => ok(response, JSON.stringify({ user: { id: 1, login: 'x' } })));
    await assert.rejects(client(server.baseUrl).users.get(1), (e: unknown) => e instanceof CmiProtocolError && /^user\.email is not a string/.test(e.message));
  });
});

describe('CmiClient against a hostile server', () => {
  it('refuses an answer longer than maxResponseBytes, streamed without a length, and one announced too long', async () => {
    const server = await scripted((request, response) => {
      if (request.url === '/version.json') {
        // Chunked, no Content-Length: 64 KiB pieces until the client hangs up.
        response.writeHead(200, { 'content-type': 'application/json' });
        const piece = Buffer.alloc(65_536, 0x20);
        const more = () => {
          while (response.write(piece)) if (response.destroyed) return;
          response.once('drain', more);
        };
        response.on('close', () => response.removeAllListeners('drain'));
        more();
      } else response.writeHead(200, { 'content-type': 'application/json', 'content-length': '2000000' }).write('{');
    });
    const small = client(server.baseUrl, { maxResponseBytes: 1_000_000 });
    await assert.rejects(small.version(), (e: unknown) => e instanceof CmiProtocolError && e.message === 'the answer is longer than maxResponseBytes (1000000 bytes); refused');
    await assert.rejects(small.users.get(1), (e: unknown) => e instanceof CmiProtocolError && /maxResponseBytes/.test(e.message));
    assert.equal(server.requests(), 2);
  });

  it('does not follow a redirect: a POST body (a new user\'s password) never reaches the Location', async () => {
    const elsewhere = await scripted((_q, response) => ok(response, JSON.stringify({ user: {} })));
    const server = await scripted((_q, response) => response.writeHead(307, { location: `${elsewhere.baseUrl}/users.json` }).end());
    await assert.rejects(
      client(server.baseUrl).users.create({ login: 'grace', email: 'grace@example.com', password: 'Secret-1234' }),
      (e: unknown) => e instanceof CmiProtocolError && e.message === `the server redirected POST /users.json (307) to ${elsewhere.baseUrl}/users.json; not followed: give that address as baseUrl`,
    );
    assert.equal(elsewhere.requests(), 0);
  });

  it('refuses a baseUrl holding credentials without repeating them', () => {
    assert.throws(
      () => new CmiClient({ baseUrl: 'https://admin:Secret-1234@cmi.example.com', login: 'admin', password: 'Secret-1234' }),
      (e: unknown) => e instanceof TypeError && e.message === 'baseUrl must not hold credentials (user:password@host): give login with password or apiKey',
    );
  });
});

describe('Retry-After as the client reads it', () => {
  const read = (value: string) => retryAfterSeconds(new Headers({ 'retry-after': value }), Date.parse('2026-11-20T10:00:00Z'));
  it('seconds, an HTTP date (past: 0), and nothing for what is neither', () => {
    assert.deepEqual(
      ['7', ' 30 ', '99999999999999999999', 'Fri, 20 Nov 2026 10:00:05 GMT', 'Thu, 19 Nov 2026 10:00:00 GMT', '-5', '1.5', '2', 'soon', '1e3', ''].map(read),
      [7, 30, 1e20, 5, 0, undefined, undefined, 2, undefined, undefined, undefined],
    );
  });
});
