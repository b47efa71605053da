import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runCmiProcess, startServer } from './support/cli.js';
import { freshDatabase } from './support/database.js';

const basic = (login: string, password: string) => `Basic ${Buffer.from(`${login}:${password}`).toString('base64')}`;
const GENERATED = /Created administrator "admin" with password: (\S+)/;

/**
 * The generated password of the first administrator is never lost (docs/operations.md#the-first-administrator):
 * a start that fails creates no administrator, so the next start creates one and prints its password.
 */
describe('a first start that fails before it serves', () => {
  let busy: Server;
  let busyPort: number;
  before(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  for (const workers of ['1', '2']) {
    it(`with --workers ${workers}: fails on a port in use, and the next start prints a generated password that logs in`, async () => {
      const empty = await freshDatabase();
      const env = { DATABASE_URL: empty.url, CMI_ADMIN_PASSWORD: '', HOST: '127.0.0.1' };
      try {
        // `cmi serve` runs as its own process (test/support/cli.ts): it exits the process and handles its signals.
        const failed = await runCmiProcess(['serve', '--port', String(busyPort), '--workers', workers], env);
        assert.equal(failed.code, 1, failed.stderr);
        assert.doesNotMatch(failed.stdout, /Created administrator/);

        const server = await startServer(env, ['--workers', workers]);
        try {
          const password = GENERATED.exec(server.output)?.[1];
          assert.ok(password, server.output);
          assert.doesNotMatch(server.output, /Log in with an existing user/);
          const res = await fetch(`${server.baseUrl}/version.json`, { headers: { authorization: basic('admin', password) } });
          assert.equal(res.status, 200);
          assert.equal(await res.text(), '{"version":"6.7"}');
        } finally {
          assert.equal(await server.stop(), 0);
        }
      } finally {
        await empty.drop();
      }
    });
  }
});
