import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type RunningServer, runCmi, runCmiProcess, startServer } from './support/cli.js';
import { onPostgres } from './support/database.js';
import { eventually } from './support/eventually.js';
import { freePort, type ThrowawayPostgres, throwawayPostgres } from './support/throwaway-postgres.js';

// docs/operations.md#when-the-database-cannot-be-reached: one line, where (never the password), why, what to check.
const PASSWORD = 'never-print-this-pw';
const REFUSED = (where: string) =>
  `cmi: cannot connect to PostgreSQL at ${where}: connection refused; check that PostgreSQL is running and listens on ${where} (the host and port of DATABASE_URL)\n`;
const TIMED_OUT = (where: string) =>
  `cmi: cannot connect to PostgreSQL at ${where}: timed out; check that PostgreSQL answers there (not another service, not a firewall dropping packets), or raise CMI_DB_STATEMENT_TIMEOUT\n`;

/** The host:port of the suite's PostgreSQL (DATABASE_URL), and a URL to it with another user, password and database. */
function suiteServer(user: string, database: string): { where: string; url: string } {
  const url = new URL(process.env.DATABASE_URL as string);
  const where = `${url.hostname}:${url.port || '5432'}`;
  return { where, url: `postgres://${user}:${PASSWORD}@${where}/${database}` };
}

describe('a database that cannot be reached at start-up', { timeout: 600_000 }, () => {
  let silent: Server;
  let silentPort: number;
  const held: Socket[] = [];
  before(async () => {
    // Accepts connections and never answers: a hung server, a firewall that lets the SYN through.
    silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  after(() => {
    for (const socket of held) socket.destroy();
    silent.close();
  });

  it('refused: serve and migrate print one line naming host:port and the cause, exit 1, never the password', async () => {
    const port = await freePort();
    const env = { DATABASE_URL: `postgres://cmi:${PASSWORD}@127.0.0.1:${port}/cmi`, CMI_DB_STATEMENT_TIMEOUT: '2000' };
    for (const command of [['serve', '--port', '0'], ['migrate'], ['local', 'users', 'ls']]) {
      // Each as its own process, as the operator runs them: `cmi serve` exits the process (test/support/cli.ts).
      const run = await (command[0] === 'serve' ? runCmiProcess : runCmi)(command, env);
      assert.equal(run.stderr, REFUSED(`127.0.0.1:${port}`), command.join(' '));
      assert.equal(run.stdout, '');
      assert.equal(run.code, 1);
    }
  });

  it('refused, with --log-format json: the same line as one JSON object on stderr, level fatal', async () => {
    const port = await freePort();
    // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
    const run = await runCmiProcess(['serve', '--port', '0', '--log-format', 'json'], { DATABASE_URL: `postgres://cmi:${PASSWORD}@127.0.0.1:${port}/cmi` });
    assert.equal(run.code, 1);
    assert.equal(run.stdout, '');
    const lines = run.stderr.split('\n');
    assert.equal(lines.length, 2, run.stderr);
    assert.equal(lines[1], '');
    const entry = JSON.parse(lines[0] as string) as Record<string, unknown>;
    assert.deepEqual(Object.keys(entry), ['time', 'level', 'pid', 'msg']);
    assert.equal(entry.level, 'fatal');
    assert.equal(entry.msg, REFUSED(`127.0.0.1:${port}`).slice('cmi: '.length, -1));
  });

  it('timed out: a server that accepts and never answers is given up after CMI_DB_STATEMENT_TIMEOUT, in one line', async () => {
    // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
    const run = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: `postgres://cmi:${PASSWORD}@127.0.0.1:${silentPort}/cmi`, CMI_DB_STATEMENT_TIMEOUT: '500' });
    assert.equal(run.stderr, TIMED_OUT(`127.0.0.1:${silentPort}`));
    assert.equal(run.code, 1);
  });

  it('database missing: the server\'s word for it, and what to check', { skip: !onPostgres && 'needs the PostgreSQL of the suite' }, async () => {
    const { where, url } = suiteServer('postgres', 'cmi_no_such_database');
    // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
    const run = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: url });
    assert.equal(run.stderr, `cmi: cannot connect to PostgreSQL at ${where}: database missing (database "cmi_no_such_database" does not exist); check the database name at the end of DATABASE_URL, or create it (createdb)\n`);
    assert.equal(run.code, 1);
  });

  it('a role that does not exist: authentication failed, never the password', { skip: !onPostgres && 'needs the PostgreSQL of the suite' }, async () => {
    const { where, url } = suiteServer('cmi_no_such_role', 'postgres');
    const run = await runCmi(['migrate'], { DATABASE_URL: url });
    assert.equal(run.stderr, `cmi: cannot connect to PostgreSQL at ${where}: authentication failed (role "cmi_no_such_role" does not exist); check the user and password of DATABASE_URL, that the role exists (createuser), and pg_hba.conf\n`);
    assert.equal(run.code, 1);
  });
});

describe('a SQLite file that cannot be opened at start-up', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-unopenable-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const check = 'check that the path of DATABASE_URL is a file in a folder, and that the user cmi runs as may create and write both (under systemd, /var/lib/cmi)';

  it('a path through a file, and a path that is a folder: one line with the path, the cause and what to check', async () => {
    writeFileSync(join(dir, 'a-file'), '');
    const throughFile = join(dir, 'a-file', 'cmi.sqlite3');
    // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
    const serve = await runCmiProcess(['serve', '--port', '0'], { DATABASE_URL: `sqlite:${throughFile}` });
    assert.equal(serve.stderr, `cmi: cannot open the SQLite database at ${throughFile}: cannot open (EEXIST: file already exists); ${check}\n`);
    assert.equal(serve.code, 1);
    const folder = join(dir, 'a-folder.sqlite3');
    mkdirSync(folder);
    const migrate = await runCmi(['migrate'], { DATABASE_URL: `sqlite:${folder}` });
    assert.equal(migrate.stderr, `cmi: cannot open the SQLite database at ${folder}: cannot open (unable to open database file); ${check}\n`);
    assert.equal(migrate.code, 1);
  });
});

describe('a database that goes away during service', { skip: !onPostgres && 'runs with the PostgreSQL suite', timeout: 600_000 }, () => {
  let pg: ThrowawayPostgres;
  let server: RunningServer | undefined;
  before(async () => {
    pg = await throwawayPostgres();
  });
  after(async () => {
    await server?.stop();
    pg.destroy();
  });

  it('answers 503 and logs the same one line, at warn, without the password', async () => {
    const url = new URL(pg.url);
    url.password = PASSWORD;
    server = await startServer({ DATABASE_URL: url.toString(), CMI_ADMIN_PASSWORD: 'admin-password', CMI_DB_STATEMENT_TIMEOUT: '1000' });
    const where = `127.0.0.1:${url.port}`;
    const auth = { authorization: `Basic ${Buffer.from('admin:admin-password').toString('base64')}` };
    assert.equal((await fetch(`${server.baseUrl}/users.json`, { headers: auth })).status, 200);
    pg.stop();
    const refused = REFUSED(where).slice('cmi: '.length, -1);
    await eventually(async () => {
      const res = await fetch(`${server!.baseUrl}/users.json?page=2`, { headers: auth });
      assert.equal(res.status, 503);
      assert.equal(await res.text(), '{"errors":{"base":["Service unavailable: the database cannot be reached; try again later"]}}');
      const lines = server!.output.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
      assert.ok(lines.some((line) => line.msg === refused && line.level === 40 && line.code === 'CMI_ERR_SERVICE_UNAVAILABLE'), `no line ${refused} in ${server!.output}`);
    }, 15_000, 300);
    assert.ok(!server.output.includes(PASSWORD) && !server.errors.includes(PASSWORD));
  });
});
