import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startServer } from './support/cli.js';
import { eventually } from './support/eventually.js';
import { type FreshDatabase, freshDatabase } from './support/database.js';

const ADMIN = 'Basic ' + Buffer.from('admin:lifecycle-password').toString('base64');

/**
 * Sends a request whose body arrives in two parts: `finish()` sends the rest, `answer` is the raw reply,
 * complete when the server closes the connection (`Connection: close`: a kept-alive one would stay open
 * for the server's keep-alive timeout, 72 s, after the answer).
 */
function slowPost(baseUrl: string) {
  const { hostname, port } = new URL(baseUrl);
  const body = JSON.stringify({ infrastructure_error: { error_class: 'SlowUpload', message: 'in flight during shutdown' } });
  const socket = connect(Number(port), hostname);
  let answer = '';
  const done = new Promise<string>((resolve) => {
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => resolve(answer));
  });
  socket.write(
    `POST /sysadmin_tools/infrastructure/errors.json HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: ${ADMIN}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
  );
  return { finish: () => socket.write(body.slice(10)), answer: done, socket };
}

const workerPids = (primary: number) =>
  execFileSync('pgrep', ['-P', String(primary)], { encoding: 'utf8' }).trim().split('\n').map(Number);

/** Waits, up to 20 s, until `check` holds (a child process's output or its children move on their own). */
const until = (check: () => boolean, what: string) => eventually(() => assert.ok(check(), `timed out waiting for ${what}`), 20_000, 50);

describe('stopping and restarting server processes', () => {
  let database: FreshDatabase;
  let env: Record<string, string>;
  before(async () => {
    database = await freshDatabase();
    env = { DATABASE_URL: database.url, CMI_ADMIN_PASSWORD: 'lifecycle-password', CMI_SHUTDOWN_TIMEOUT: '10' };
  });
  after(() => database.drop());

  it('SIGTERM lets a request in flight finish, then exits 0 without waiting for the timeout', async () => {
    const server = await startServer(env);
    const request = slowPost(server.baseUrl);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const exited = server.stop();
    await new Promise((resolve) => setTimeout(resolve, 200));
    request.finish();
    const answer = await request.answer;
    assert.match(answer, /^HTTP\/1\.1 201 Created\r\n/);
    assert.match(answer, /"error_class":"SlowUpload"/);
    assert.equal(await exited, 0);
    assert.ok(Date.now() - started < 8000, 'stopped before the shutdown timeout');
  });

  it('with --workers 2, a worker killed with SIGKILL is replaced, the others finish their requests, SIGTERM drains all', async () => {
    const server = await startServer(env, ['--workers', '2']);
    try {
      assert.match(server.output, /with 2 workers/);
      const primary = server.child.pid as number;
      const workers = workerPids(primary);
      assert.equal(workers.length, 2);

      // Requests in flight on both workers (the primary hands connections out in turn).
      const inFlight = [slowPost(server.baseUrl), slowPost(server.baseUrl), slowPost(server.baseUrl), slowPost(server.baseUrl)];
      await new Promise((resolve) => setTimeout(resolve, 300));
      const [victim] = workers as [number];
      process.kill(victim, 'SIGKILL');
      await until(() => server.errors.includes(`worker ${victim} exited (SIGKILL); starting a new one`), 'the restart line');
      for (const request of inFlight) request.finish();
      const answers = await Promise.all(inFlight.map((request) => request.answer));
      const completed = answers.filter((answer) => answer.startsWith('HTTP/1.1 20'));
      const cut = answers.filter((answer) => answer === '');
      assert.ok(completed.length >= 1, 'requests on the surviving worker completed');
      assert.equal(completed.length + cut.length, 4, `every request either completed or lost its connection: ${answers.join('|')}`);

      await until(() => workerPids(primary).length === 2 && !workerPids(primary).includes(victim), 'a new worker');
      // The new worker serves: every request over fresh connections succeeds.
      for (let i = 0; i < 6; i++) {
        const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: ADMIN, connection: 'close' } });
        assert.equal(res.status, 200);
      }
    } finally {
      assert.equal(await server.stop(), 0);
    }
  });
});
