import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { describe, it } from 'node:test';
import { startServer } from './support/cli.js';
import { freshDatabase } from './support/database.js';

// The port opens only once cmi can answer correctly. A client that connects as
// soon as the port opens on a fresh database gets 200 for the first administrator's credentials, with
// one process and with workers (docs/operations.md#the-first-administrator).

const AUTH = `Basic ${Buffer.from('admin:first-admin-password').toString('base64')}`;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** GET /version.json with the administrator's credentials: the status, or undefined while nothing listens. */
function ask(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/version.json', headers: { authorization: AUTH } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

describe('the first administrator exists before the port opens', () => {
  for (const workers of ['1', '2']) {
    it(`answers the very first request with 200 (--workers ${workers})`, async () => {
      const own = await freshDatabase();
      const port = await freePort();
      const starting = startServer({ DATABASE_URL: own.url, CMI_ADMIN_LOGIN: 'admin', CMI_ADMIN_PASSWORD: 'first-admin-password' }, ['--workers', workers], { port });
      let first: number | undefined;
      let failed = false;
      void starting.catch(() => (failed = true));
      while (first === undefined && !failed) first = await ask(port);
      const server = await starting;
      try {
        assert.equal(first, 200, 'the first answer once the port opened');
        assert.match(server.output, /Created administrator "admin" with the password from CMI_ADMIN_PASSWORD/);
      } finally {
        await server.stop();
        await own.drop();
      }
    });
  }
});
