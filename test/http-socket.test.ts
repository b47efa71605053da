import assert from 'node:assert/strict';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp, listenLocally } from './support/app.js';
import { tokenOf, withCookie } from './support/http.js';
import { eventually } from './support/eventually.js';
import { statementGate } from './support/statement-gate.js';
import type { QueryResult } from 'kysely';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** An infrastructure error as the database holds it (the XML form of GET .../errors/:id: docs/api.md#infrastructure-errors). */
const STORED_ERROR = {
  id: 7,
  fingerprint: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  error_class: 'TypeError',
  message: 'Cannot read properties of undefined',
  backtrace: "src/store/users.ts:42:in 'findUser'\nsrc/server/routes/users.ts:18:in 'list'",
  counter: 3,
  reported: 0,
  created_at: '2026-11-20T10:00:00.000Z',
  updated_at: '2026-11-20T10:05:00.000Z',
};

const STORED_ERROR_XML = `<?xml version="1.0" encoding="UTF-8"?>
<infrastructure_error>
  <id type="integer">7</id>
  <backtrace>src/store/users.ts:42:in 'findUser'
src/server/routes/users.ts:18:in 'list'</backtrace>
  <counter type="integer">3</counter>
  <created_at type="datetime">2026-11-20T10:00:00+00:00</created_at>
  <error_class>TypeError</error_class>
  <fingerprint>9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08</fingerprint>
  <message>Cannot read properties of undefined</message>
  <reported type="boolean">false</reported>
  <updated_at type="datetime">2026-11-20T10:05:00+00:00</updated_at>
</infrastructure_error>
`;

/** An ordinary user as `addUsers` creates it, in the JSON of a list. */
const userJson = (t: TestApp, id: number, login: string) =>
  `{"user":{"id":${id},"login":"${login}","email":"${login}@example.com","first_name":"Alice","last_name":"User","status":"active",` +
  '"time_zone":null,"locale":null,"created_at":"2026-11-20T10:00:00+00:00","updated_at":"2026-11-20T10:00:00+00:00",' +
  '"activated_at":"2026-11-20T10:00:00+00:00","suspend_at":null,"deleted_at":null,"password_changed_at":"2026-11-20T10:00:00+00:00",' +
  `"roles":[{"role":${JSON.stringify(t.systemRoles.user)}}],"bucket_id":null,"user_group_id":null,"totp_enabled":false,"registered_yubikey":false}}`;

interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reusedSocket: boolean;
}

/** A GET through node:http with a given agent, to see which socket carried it. */
function rawGet(agent: Agent, port: number, path: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ agent, host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8'), reusedSocket: req.reusedSocket }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('over a real HTTP socket', () => {
  let t: TestApp;
  let base: string;
  let port: number;
  let connections = 0;

  before(async () => {
    t = await createTestApp();
    await t.addUsers(3);
    await t.database.db.insertInto('infrastructure_errors').values(STORED_ERROR).execute();
    port = await listenLocally(t.app);
    base = `http://127.0.0.1:${port}`;
    t.app.server.on('connection', () => {
      connections += 1;
    });
  });
  after(() => t.close());

  const fetchAs = (path: string, authorization: string | undefined, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers: { ...(authorization ? { authorization } : {}), ...headers } });

  it('answers the version in JSON with the common response headers (docs/api.md#response-headers)', async () => {
    const res = await fetchAs('/version.json', t.adminAuth, { accept: 'application/json', 'content-type': 'application/json' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(res.headers.get('status'), '200 OK');
    assert.match(String(res.headers.get('x-request-id')), UUID);
    assert.match(String(res.headers.get('x-runtime')), /^\d+\.\d{6}$/);
    assert.match(String(res.headers.get('etag')), /^W\/"[0-9a-f]{40}"$/);
    assert.equal(res.headers.get('cache-control'), 'max-age=0, private, must-revalidate');
    assert.equal(await res.text(), '{"version":"6.7"}');
  });

  it('answers the version in XML', async () => {
    const res = await fetchAs('/version.xml', t.adminAuth, { accept: 'application/xml', 'content-type': 'application/xml' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/xml; charset=utf-8');
    assert.equal(await res.text(), '<?xml version="1.0" encoding="UTF-8"?>\n<cmi>\n  <version>6.7</version>\n</cmi>\n');
  });

  it('keeps the client\'s X-Request-Id', async () => {
    const res = await fetchAs('/version.json', t.adminAuth, { 'x-request-id': 'socket-test-1' });
    assert.equal(res.headers.get('x-request-id'), 'socket-test-1');
    await res.arrayBuffer();
  });

  it('answers a users page with X-Total, X-Limit, X-Page and a query-style Link', async () => {
    const res = await fetchAs('/users.json?page=2&per_page=2', t.adminAuth);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-total'), '5');
    assert.equal(res.headers.get('x-limit'), '2');
    assert.equal(res.headers.get('x-page'), '2');
    assert.equal(
      res.headers.get('link'),
      '</users.json?page=1&per_page=2>; rel="first", </users.json?page=1&per_page=2>; rel="prev", ' +
        '</users.json?page=3&per_page=2>; rel="next", </users.json?page=3&per_page=2>; rel="last"',
    );
    assert.equal(await res.text(), `[${userJson(t, 3, 'user001')},${userJson(t, 4, 'user002')}]`);
  });

  it('answers the last users page in XML with a path-style Link and no next', async () => {
    const res = await fetchAs('/users.xml/per_page/2/page/3', t.adminAuth);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/xml; charset=utf-8');
    assert.equal(res.headers.get('x-total'), '5');
    assert.equal(res.headers.get('x-limit'), '2');
    assert.equal(res.headers.get('x-page'), '3');
    assert.equal(
      res.headers.get('link'),
      '</users.xml/page/1/per_page/2>; rel="first", </users.xml/page/2/per_page/2>; rel="prev", </users.xml/page/3/per_page/2>; rel="last"',
    );
    const body = await res.text();
    assert.ok(body.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<users type="array">\n  <user>\n    <id type="integer">5</id>\n'));
    assert.equal(body.match(/<user>/g)?.length, 1);
  });

  it('answers the XML error detail exactly, every field typed, in the order docs/api.md shows', async () => {
    const res = await fetchAs('/sysadmin_tools/infrastructure/errors/7.xml', t.adminAuth, {
      accept: 'application/xml',
      'content-type': 'application/xml',
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/xml; charset=utf-8');
    assert.equal(await res.text(), STORED_ERROR_XML);
  });

  it('answers the JSON error detail wrapped in its root', async () => {
    const res = await fetchAs('/sysadmin_tools/infrastructure/errors/7.json', t.adminAuth, {
      accept: 'application/json',
      'content-type': 'application/json',
    });
    assert.equal(res.status, 200);
    assert.equal(
      await res.text(),
      '{"infrastructure_error":{"id":7,"backtrace":"src/store/users.ts:42:in \'findUser\'\\nsrc/server/routes/users.ts:18:in \'list\'",' +
        '"counter":3,"created_at":"2026-11-20T10:00:00+00:00","error_class":"TypeError",' +
        '"fingerprint":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",' +
        '"message":"Cannot read properties of undefined","reported":false,"updated_at":"2026-11-20T10:05:00+00:00"}}',
    );
  });

  it('answers 401 without credentials, with WWW-Authenticate', async () => {
    const res = await fetchAs('/version.json', undefined);
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="cmi"');
    assert.equal(res.headers.get('status'), '401 Unauthorized');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.equal(await res.text(), '{"errors":{"base":["Access denied"]}}');
  });

  it('answers 304 with an empty body to a matching If-None-Match', async () => {
    const first = await fetchAs('/users.json', t.adminAuth);
    await first.arrayBuffer();
    const etag = String(first.headers.get('etag'));
    const res = await fetchAs('/users.json', t.adminAuth, { 'if-none-match': etag });
    assert.equal(res.status, 304);
    assert.equal(await res.text(), '');
  });

  it('lets the session cookie alone authenticate a later request', async () => {
    const login = await fetchAs('/version.json', t.aliceAuth);
    await login.arrayBuffer();
    const res = await fetch(`${base}/users.json`, { headers: withCookie(tokenOf(login)) });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-total'), '1');
    await res.arrayBuffer();
  });

  it('keeps the connection alive: a second request reuses the socket', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = connections;
      const first = await rawGet(agent, port, '/version.json', { authorization: t.adminAuth });
      const second = await rawGet(agent, port, '/users.json', { authorization: t.adminAuth });
      assert.equal(first.status, 200);
      assert.equal(first.headers.connection, 'keep-alive');
      assert.equal(second.status, 200);
      assert.equal(second.reusedSocket, true);
      assert.equal(connections - before, 1);
    } finally {
      agent.destroy();
    }
  });

  it('keeps the connection alive after an error answer', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = connections;
      const denied = await rawGet(agent, port, '/version.json', {});
      const notFound = await rawGet(agent, port, '/no_such_thing.json', { authorization: t.adminAuth });
      const ok = await rawGet(agent, port, '/version.json', { authorization: t.adminAuth });
      assert.equal(denied.status, 401);
      assert.equal(notFound.status, 404);
      assert.equal(ok.status, 200);
      assert.equal(ok.body, '{"version":"6.7"}');
      assert.equal(ok.reusedSocket, true);
      assert.equal(connections - before, 1);
    } finally {
      agent.destroy();
    }
  });

  it('answers headers over 16 KiB with cmi\'s error body and headers (docs/api.md#errors), not Node\'s own', async () => {
    const res = await fetchAs('/version.json', t.adminAuth, { 'x-padding': 'a'.repeat(20_000) });
    assert.equal(res.status, 431);
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(res.headers.get('status'), '431 Request Header Fields Too Large');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    assert.equal(await res.text(), '{"errors":{"base":["Request header fields too large (16 KiB in all)"]}}');
  });
});

describe('Basic auth resent on a keep-alive connection', () => {
  let t: TestApp;
  let port: number;
  const agents: Agent[] = [];

  before(async () => {
    t = await createTestApp();
    port = await listenLocally(t.app);
  });
  after(async () => {
    for (const agent of agents) agent.destroy();
    await t.close();
  });

  /** A client holding one connection open. */
  const connection = () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return (path: string, authorization: string) => rawGet(agent, port, path, { authorization });
  };

  it('keeps one session per connection: the same cookie on that connection, another on a second one', async () => {
    const one = connection();
    const two = connection();
    const first = await one('/version.json', t.aliceAuth);
    const again = await one('/users.json', t.aliceAuth);
    const elsewhere = await two('/version.json', t.aliceAuth);
    assert.deepEqual([first.status, again.status, elsewhere.status], [200, 200, 200]);
    assert.equal(again.reusedSocket, true);
    assert.equal(tokenOf(again), tokenOf(first));
    assert.notEqual(tokenOf(elsewhere), tokenOf(first));
  });

  it('answers other credentials sent on the same connection as their own user', async () => {
    const one = connection();
    const asAlice = await one('/users.json', t.aliceAuth);
    const asAdmin = await one('/users.json', t.adminAuth);
    const wrong = await one('/users.json', t.basic('alice', 'not-her-password'));
    assert.equal(asAdmin.reusedSocket, true);
    assert.deepEqual([asAlice.status, asAlice.headers['x-total']], [200, '1']);
    assert.deepEqual([asAdmin.status, asAdmin.headers['x-total']], [200, '2']);
    assert.notEqual(tokenOf(asAdmin), tokenOf(asAlice));
    assert.equal(wrong.status, 401);
  });

  it('refuses the old password on the very next request of the connection after a change', async () => {
    const one = connection();
    assert.equal((await one('/version.json', t.aliceAuth)).status, 200);
    const change = await t.app.inject({
      method: 'PUT',
      url: `/users/${t.alice.id}.json`,
      headers: { authorization: t.adminAuth, 'content-type': 'application/json' },
      payload: { user: { password: 'a-new-password' } },
    });
    assert.equal(change.statusCode, 204);
    const old = await one('/version.json', t.aliceAuth);
    assert.equal(old.reusedSocket, true);
    assert.equal(old.status, 401);
    assert.equal((await one('/version.json', t.basic('alice', 'a-new-password'))).status, 200);
  });

  it('trusts a connection no longer than the verification cache: a change made elsewhere holds after CMI_AUTH_CACHE_TTL', async () => {
    const one = connection();
    const [bob] = await t.addUsers(1);
    const bobAuth = t.basic(bob!.login, 'shared-password');
    const before = await one('/version.json', bobAuth);
    assert.equal(before.status, 200);
    // Another process suspends bob: this one hears nothing of it.
    await t.database.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', bob!.id).execute();
    const within = await one('/version.json', bobAuth);
    t.time.advance(t.config.authCacheSeconds);
    const after = await one('/version.json', bobAuth);
    assert.equal(after.reusedSocket, true);
    assert.deepEqual([within.status, after.status], [200, 401]);
  });
});

describe('Basic auth resent on one connection for longer than a cookie refresh', () => {
  let t: TestApp;
  let agent: Agent;
  let port: number;
  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '300' });
    port = await listenLocally(t.app);
    agent = new Agent({ keepAlive: true, maxSockets: 1 });
  });
  after(async () => {
    agent.destroy();
    await t.close();
  });

  it('hands out a session no staler than a refresh: the same one for under 60 s, then a new one', async () => {
    const login = async () => {
      const res = await rawGet(agent, port, '/version.json', { authorization: t.aliceAuth });
      assert.equal(res.status, 200);
      return tokenOf(res);
    };
    const first = await login();
    t.time.advance(59);
    assert.equal(await login(), first);
    t.time.advance(1);
    const later = await login();
    assert.notEqual(later, first);
    // <user>.<epoch>.<session>.<issued>.<last seen>.<mac>: issued and last seen are now.
    const now = String(t.time.clock().getTime() / 1000);
    assert.deepEqual(later.split('.').slice(3, 5), [now, now]);
  });
});

describe('the session cookie resent on a keep-alive connection', () => {
  let t: TestApp;
  let port: number;
  const agents: Agent[] = [];
  before(async () => {
    t = await createTestApp({ CMI_AUTH_CACHE_TTL: '300' });
    port = await listenLocally(t.app);
  });
  after(async () => {
    for (const agent of agents) agent.destroy();
    await t.close();
  });

  /** A session of alice's, and a client holding one connection open that sends its cookie. */
  const sessionOnConnection = async () => {
    const token = tokenOf(await t.app.inject({ url: '/version.json', headers: { authorization: t.aliceAuth } }));
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return { token, get: (path: string) => rawGet(agent, port, path, withCookie(token)) };
  };

  it('is refused on the very next request of the connection once its session ended elsewhere', async () => {
    const { token, get } = await sessionOnConnection();
    const before = [await get('/version.json'), await get('/version.json')];
    assert.deepEqual(before.map((res) => [res.status, res.headers['set-cookie']]), [[200, undefined], [200, undefined]]);
    const logout = await t.app.inject({ method: 'DELETE', url: '/session.json', headers: withCookie(token) });
    assert.equal(logout.statusCode, 204);
    const after = await get('/version.json');
    assert.equal(after.reusedSocket, true);
    assert.equal(after.status, 401);
  });

  it('is refreshed on the connection as often as anywhere: the same for under 60 s, then a new token', async () => {
    const { token, get } = await sessionOnConnection();
    assert.equal((await get('/version.json')).headers['set-cookie'], undefined);
    t.time.advance(59);
    assert.equal((await get('/version.json')).headers['set-cookie'], undefined);
    t.time.advance(1);
    const refreshed = await get('/version.json');
    assert.equal(refreshed.reusedSocket, true);
    const renewed = tokenOf(refreshed);
    assert.notEqual(renewed, token);
    // <user>.<epoch>.<session>.<issued>.<last seen>.<mac>: the same session, seen now.
    assert.deepEqual(renewed.split('.').slice(2, 5), [...token.split('.').slice(2, 4), String(t.time.clock().getTime() / 1000)]);
  });

  it('answers a client that keeps sending the old cookie with the same new token until that one is due, then a newer one', async () => {
    const { token, get } = await sessionOnConnection();
    assert.equal((await get('/version.json')).headers['set-cookie'], undefined);
    t.time.advance(60);
    const first = tokenOf(await get('/version.json'));
    assert.notEqual(first, token);
    t.time.advance(30);
    const again = await get('/version.json');
    assert.equal(again.reusedSocket, true);
    // Its last seen is 30 s old: no staler than a refresh allows.
    assert.equal(tokenOf(again), first);
    t.time.advance(30);
    const newer = tokenOf(await get('/version.json'));
    assert.deepEqual(newer.split('.').slice(2, 5), [...token.split('.').slice(2, 4), String(t.time.clock().getTime() / 1000)]);
  });
});

describe('a Basic verification in use, checked again before it expires (docs/security.md#the-verification-cache)', () => {
  let t: TestApp;
  let port: number;
  const gate = statementGate();
  const agents: Agent[] = [];
  before(async () => {
    t = await createTestApp({}, { gate });
    port = await listenLocally(t.app);
  });
  after(async () => {
    for (const agent of agents) agent.destroy();
    await t.close();
  });

  const connection = () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(agent);
    return (authorization: string) => rawGet(agent, port, '/version.json', { authorization });
  };
  /** The statement that reads a user's credentials (login, password hash) for a check of them. */
  const readsCredentialsOf = (login: string) => ({ rows }: QueryResult<unknown>) =>
    rows.some((row) => (row as { login?: string }).login === login && 'password_hash' in (row as object));
  /** Into the last fifth of the verification's life, where a use of it starts a check in the background. */
  const intoRefresh = () => t.time.advance(t.config.authCacheSeconds * 0.9);

  it('drops it at once, before it expires, when the check finds the user suspended by a change it did not hear of', async () => {
    const [bob] = await t.addUsers(1);
    const bobAuth = t.basic(bob!.login, 'shared-password');
    const one = connection();
    assert.equal((await one(bobAuth)).status, 200);
    // Suspended as by another process whose change this one does not hear (its listening connection down).
    await t.database.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', bob!.id).execute();
    intoRefresh();
    // Answered from the verification, which still holds; its check starts.
    assert.equal((await one(bobAuth)).status, 200);
    await eventually(async () => {
      const res = await one(bobAuth);
      assert.equal(res.status, 401, 'the check that found bob suspended dropped his verification before its expiry');
      assert.equal(res.reusedSocket, true);
    });
  });

  it('does not let a check under way when a suspension is answered admit a request made after it', async () => {
    const [carol] = await t.addUsers(1);
    const carolAuth = t.basic(carol!.login, 'shared-password');
    const one = connection();
    assert.equal((await one(carolAuth)).status, 200);
    // The check in the background stops right after reading her credentials (she is active).
    const pause = gate.pauseAfter(readsCredentialsOf(carol!.login));
    intoRefresh();
    assert.equal((await one(carolAuth)).status, 200);
    await pause.reached;
    const suspended = await t.app.inject({ method: 'POST', url: `/users/${carol!.id}/suspend.json`, headers: { authorization: t.adminAuth } });
    assert.equal(suspended.statusCode, 200, suspended.body);
    // Asked after the suspension was answered, while the check that read her as active is still held.
    const afterSuspension = one(carolAuth);
    const other = connection()(carolAuth);
    pause.release();
    assert.deepEqual([(await afterSuspension).status, (await other).status], [401, 401]);
    // Nor did that check, once it went on, keep what it verified.
    assert.equal((await connection()(carolAuth)).status, 401);
  });

  it('keeps answering from the verification while it is checked again, and from the new one after the old would have expired', async () => {
    const [dave] = await t.addUsers(1);
    const daveAuth = t.basic(dave!.login, 'shared-password');
    const one = connection();
    assert.equal((await one(daveAuth)).status, 200);
    // Held after reading his credentials: the check cannot finish until released.
    const pause = gate.pauseAfter(readsCredentialsOf(dave!.login));
    intoRefresh();
    assert.equal((await one(daveAuth)).status, 200);
    await pause.reached;
    // The check is held, and its requests are answered meanwhile, on this connection and on another.
    assert.deepEqual([(await one(daveAuth)).status, (await connection()(daveAuth)).status], [200, 200]);
    pause.release();
    // Past the old verification's expiry: answered from the new one once the check stored it (a request
    // that comes before waits for that check rather than starting its own).
    t.time.advance(t.config.authCacheSeconds * 0.2);
    await t.database.db.updateTable('users').set({ status: 'suspended' }).where('id', '=', dave!.id).execute();
    assert.equal((await one(daveAuth)).status, 200);
  });
});
