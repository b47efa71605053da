import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp, listenLocally } from './support/app.js';
import { eventually } from './support/eventually.js';

/**
 * Clients that send slowly, or not at all, or open too many connections (docs/limits.md#connections):
 * over real sockets, with small configured timeouts. A test that would wait for a close that never
 * comes fails by its own timeout.
 */

const ACCESS_DENIED = '{"errors":{"base":["Access denied"]}}';
const SHORT = { timeout: 10_000 };

interface Client {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Settles when one whole answer (by its Content-Length) has arrived: its text. */
  answer(): Promise<string>;
  /** Settles when the server has closed the connection: everything it sent. */
  closed: Promise<string>;
}

function client(port: number, localAddress = '127.0.0.1'): Promise<Client> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    let text = '';
    let waiting: (() => void) | undefined;
    const whole = () => {
      const end = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)\r\n/i.exec(text);
      return end !== -1 && length !== null && Buffer.byteLength(text) >= end + 4 + Number(length[1]);
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (waiting && whole()) waiting();
    });
    const closed = new Promise<string>((done) => socket.on('close', () => done(text)));
    socket.on('error', () => {});
    socket.once('connect', () =>
      resolve({
        socket,
        received: () => text,
        answer: () =>
          new Promise((done) => {
            const settle = () => {
              waiting = undefined;
              const answer = text;
              text = '';
              done(answer);
            };
            if (whole()) settle();
            else waiting = settle;
          }),
        closed,
      }),
    );
    socket.once('error', reject);
  });
}

/** The value of a header in a raw answer, or undefined. */
const header = (answer: string, name: string) => new RegExp(`\\r\\n${name}: ([^\\r]*)\\r\\n`, 'i').exec(answer)?.[1];
const bodyOf = (answer: string) => answer.slice(answer.indexOf('\r\n\r\n') + 4);
const statusOf = (answer: string) => /^HTTP\/1\.1 (\d+) /.exec(answer)?.[1];

const post = (path: string, headers: Record<string, string>, contentLength: number, start: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n` +
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('') +
  `\r\n${start}`;

describe('an answer given before the body was read closes the connection', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp();
    port = await listenLocally(t.app);
  });
  after(() => t.close());

  it('a 401 to a body announced but not sent carries Connection: close, and the server closes the socket', SHORT, async () => {
    const c = await client(port);
    c.socket.write(post('/users.json', {}, 100_000, '{"u'));
    const all = await c.closed;
    assert.equal(statusOf(all), '401');
    assert.equal(header(all, 'connection'), 'close');
    assert.equal(header(all, 'www-authenticate'), 'Basic realm="cmi"');
    assert.equal(bodyOf(all), ACCESS_DENIED);
  });

  it('so does a 413 for a body announced over CMI_BODY_LIMIT, with credentials', SHORT, async () => {
    const c = await client(port);
    c.socket.write(post('/users.json', { Authorization: t.adminAuth }, 2_000_000, '{'));
    const all = await c.closed;
    assert.equal(statusOf(all), '413');
    assert.equal(header(all, 'connection'), 'close');
    assert.equal(bodyOf(all), '{"errors":{"base":["Request body is larger than the limit of 1048576 bytes"]}}');
  });

  it('a body sent whole keeps the connection: a 401 (after a database lookup), then a 201 on the same socket', SHORT, async () => {
    const c = await client(port);
    const body = '{"error_class":"Kept"}';
    c.socket.write(post('/sysadmin_tools/infrastructure/errors.json', { Authorization: t.basic('admin', 'wrong-password') }, body.length, body));
    const denied = await c.answer();
    assert.equal(statusOf(denied), '401');
    assert.equal(header(denied, 'connection'), 'keep-alive');
    c.socket.write(post('/sysadmin_tools/infrastructure/errors.json', { Authorization: t.adminAuth }, body.length, body));
    const created = await c.answer();
    assert.equal(statusOf(created), '201');
    assert.equal(header(created, 'connection'), 'keep-alive');
    c.socket.destroy();
  });
});

describe('a body that stops arriving (CMI_BODY_TIMEOUT)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_BODY_TIMEOUT: '300' });
    port = await listenLocally(t.app);
  });
  after(() => t.close());

  it('is answered 408 in the requested format, with Connection: close, and the socket closed', SHORT, async () => {
    const c = await client(port);
    c.socket.write(post('/sysadmin_tools/infrastructure/errors.json', { Authorization: t.adminAuth }, 100, '{"error_class":'));
    const all = await c.closed;
    assert.equal(statusOf(all), '408');
    assert.equal(header(all, 'connection'), 'close');
    assert.equal(header(all, 'content-type'), 'application/json; charset=utf-8');
    assert.equal(header(all, 'status'), '408 Request Timeout');
    assert.equal(bodyOf(all), '{"errors":{"base":["Request body stalled: nothing arrived for 300 ms"]}}');
    assert.equal((await t.database.db.selectFrom('infrastructure_errors').selectAll().execute()).length, 0, 'nothing recorded');
  });

  it('in XML on an .xml path', SHORT, async () => {
    const c = await client(port);
    c.socket.write(post('/sysadmin_tools/infrastructure/errors.xml', { Authorization: t.adminAuth }, 100, '<x>'));
    const all = await c.closed;
    assert.equal(statusOf(all), '408');
    assert.equal(
      bodyOf(all),
      '<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>Request body stalled: nothing arrived for 300 ms</error>\n</errors>\n',
    );
  });
});

describe('a request that takes too long to arrive (CMI_REQUEST_TIMEOUT)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_REQUEST_TIMEOUT: '300', CMI_BODY_TIMEOUT: '60000' });
    port = await listenLocally(t.app);
  });
  after(() => t.close());

  const timedOut = (all: string) => {
    assert.equal(statusOf(all), '408');
    assert.equal(header(all, 'connection'), 'close');
    assert.equal(header(all, 'content-type'), 'application/json; charset=utf-8');
    assert.equal(bodyOf(all), '{"errors":{"base":["Request timed out"]}}');
  };

  it('a body trickled a byte at a time (never pausing long) is cut off with 408 and the socket closed', SHORT, async () => {
    const c = await client(port);
    c.socket.write(post('/sysadmin_tools/infrastructure/errors.json', { Authorization: t.adminAuth }, 100_000, '{'));
    const trickle = setInterval(() => c.socket.writable && c.socket.write(' '), 50);
    try {
      timedOut(await c.closed);
    } finally {
      clearInterval(trickle);
    }
  });

  it('so are headers that never end', SHORT, async () => {
    const c = await client(port);
    c.socket.write('GET /version.json HTTP/1.1\r\nHost: x\r\n');
    timedOut(await c.closed);
  });

  it('a connection kept alive between requests is not a request: it answers after a pause', SHORT, async () => {
    const c = await client(port);
    c.socket.write(`GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\n\r\n`);
    assert.equal(bodyOf(await c.answer()), '{"version":"6.7"}');
    // Idle for twice the request timeout (a pause the test makes, not one it hopes for), then another
    // request on the same socket.
    await new Promise((resolve) => setTimeout(resolve, 600));
    c.socket.write(`GET /version.json HTTP/1.1\r\nHost: x\r\nAuthorization: ${t.adminAuth}\r\n\r\n`);
    const again = await c.answer();
    assert.equal(statusOf(again), '200');
    c.socket.destroy();
  });
});

describe('connection caps (CMI_MAX_CONNECTIONS, CMI_MAX_CONNECTIONS_PER_ADDRESS)', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_MAX_CONNECTIONS: '3', CMI_MAX_CONNECTIONS_PER_ADDRESS: '2' });
    port = await listenLocally(t.app);
  });
  after(() => t.close());

  /** A connection the server took: it answers the liveness probe. */
  const served = async (localAddress: string) => {
    const c = await client(port, localAddress);
    c.socket.write('GET /health/live.json HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(statusOf(await c.answer()), '200');
    return c;
  };
  /** A connection the server refused: closed before any answer. */
  const refused = async (localAddress: string) => {
    const c = await client(port, localAddress);
    c.socket.write('GET /health/live.json HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal(await c.closed, '');
  };

  it('refuses a third connection from one address, and a fourth in all, and takes one again once one closes', SHORT, async () => {
    const one = await served('127.0.0.1');
    const two = await served('127.0.0.1');
    await refused('127.0.0.1');
    const three = await served('127.0.0.2');
    await refused('127.0.0.3');
    one.socket.destroy();
    await one.closed;
    await eventually(async () => (await served('127.0.0.1')).socket.destroy());
    two.socket.destroy();
    three.socket.destroy();
  });
});
