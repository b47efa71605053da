import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';

/** `cmi ingest-keys create|ls|show|edit|revoke` (docs/cli.md#cmi-ingest-keys) against a real cmi, as child processes, in order. */
describe('cmi ingest-keys', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  let publicKey: string;

  before(async () => {
    t = await createTestApp({ CMI_PUBLIC_URL: 'https://errors.example.com' });
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-ingest-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '' };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = (args: string[], extra: Record<string, string> = {}) => runCmi(args, { ...env, ...extra });
  function succeeded(res: Finished, stdout: string | RegExp): void {
    assert.deepEqual([res.stderr, res.code], ['', 0]);
    if (typeof stdout === 'string') assert.equal(res.stdout, stdout);
    else assert.match(res.stdout, stdout);
  }

  it('create prints the DSN; show prints every field; --json is the API\'s body', async () => {
    const made = await cmi(['ingest-keys', 'add', '--label', 'Billing service', '--component', 'billing', '--rate-limit', '120']);
    succeeded(made, /^Created ingest key 1 "Billing service"; its DSN:\nhttps:\/\/([0-9a-f]{32})@errors\.example\.com\/1\n$/);
    publicKey = /https:\/\/([0-9a-f]{32})@/.exec(made.stdout)![1]!;
    succeeded(await cmi(['ingest-keys', 'show', '1']), [
      'id:                        1',
      'label:                     Billing service',
      'component:                 billing',
      `public_key:                ${publicKey}`,
      `dsn:                       https://${publicKey}@errors.example.com/1`,
      'enabled:                   true',
      'rate_limit_per_minute:     120',
      'allowed_origins:           -',
      'kind:                      sentry',
      'allowed_networks:          -',
      'client_certificate_sha256: -',
      'min_severity:              3',
      'last_used_at:              -',
      'dropped:                   0',
      'created_at:                2026-11-20T10:00:00+00:00',
      'updated_at:                2026-11-20T10:00:00+00:00',
      '',
    ].join('\n'));
    const json = await cmi(['ingest-keys', 'show', '1', '--json']);
    const api = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/infrastructure/ingest_keys/1.json', headers: { authorization: t.adminAuth } });
    succeeded(json, `${api.body}\n`);
  });

  it('edit changes what its options name; ls lists the keys in a table', async () => {
    succeeded(await cmi(['ingest-keys', 'edit', '1', '--disable', '--no-component', '--origins', 'https://app.example.com']), 'Updated ingest key 1 "Billing service"\n');
    succeeded(await cmi(['ingest-keys', 'add', '--label', 'Web', '--origins', '*']), /^Created ingest key 2 "Web"; its DSN:\n/);
    const row = await t.database.db.selectFrom('ingest_keys').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    assert.deepEqual([row.enabled, row.component, row.allowed_origins, row.rate_limit_per_minute], [0, null, 'https://app.example.com', 120]);
    const [first, second] = (await t.database.db.selectFrom('ingest_keys').select('public_key').orderBy('id').execute()).map((key) => key.public_key);
    succeeded(await cmi(['ingest-keys', 'ls']), [
      'ID  LABEL            COMPONENT  ENABLED  LIMIT/MIN  DROPPED  LAST USED  DSN',
      `1   Billing service  -          no       120        0        -          https://${first}@errors.example.com/1`,
      `2   Web              -          yes      1000       0        -          https://${second}@errors.example.com/2`,
      '2 of 2 ingest keys (page 1 of 1)',
      '',
    ].join('\n'));
    const nothing = await cmi(['ingest-keys', 'edit', '1']);
    assert.deepEqual([nothing.code, nothing.stderr], [2, 'cmi: nothing to change: give at least one of the options (cmi help ingest-keys edit)\n']);
  });

  it('revoke: the key is refused by the Sentry endpoint at once; an ordinary user is refused the commands', async () => {
    succeeded(await cmi(['ingest-keys', 'revoke', '1']), 'Revoked ingest key 1 "Billing service": every server process refuses it from now on\n');
    const refused = await t.app.inject({ method: 'POST', url: `/api/1/store/?sentry_key=${publicKey}`, payload: '{}' });
    assert.deepEqual([refused.statusCode, refused.body], [401, '{"detail":"Invalid ingest key for this project"}']);
    const gone = await cmi(['ingest-keys', 'show', '1']);
    assert.deepEqual([gone.code, gone.stderr], [1, 'cmi: Resource not found\n']);
    const alice = await cmi(['ingest-keys', 'ls'], { CMI_USER: ALICE.login, CMI_PASSWORD: ALICE.password });
    assert.deepEqual([alice.code, alice.stdout, alice.stderr], [1, '', 'cmi: You are not authorized to perform this action (needs ingest_keys.read)\n']);
  });
});
