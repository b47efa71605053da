import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { authenticator } from 'otplib';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';

/** `cmi users two-factor ...` against a server in this process (docs/cli.md#second-factor), codes computed by otplib. */
describe('cmi users two-factor', () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;

  before(async () => {
    t = await createTestApp();
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-two-factor-'));
    env = { XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: '', CMI_PASSWORD: '', CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '', DATABASE_URL: `sqlite:${join(home, 'unused.sqlite3')}` };
  });
  after(async () => {
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const asAlice = { CMI_USER: ALICE.login, CMI_PASSWORD: ALICE.password };
  const asAdmin = { CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password };
  const cmi = (args: string[], extra: Record<string, string>) => runCmi(['users', 'two-factor', ...args], { ...env, ...extra });
  function succeeded(res: Finished): string {
    assert.equal(res.stderr, '');
    assert.equal(res.code, 0);
    return res.stdout;
  }

  it('enables, confirms, shows and disables; the password alone is then refused with the reason', async () => {
    const enabled = succeeded(await cmi(['enable', 'alice'], asAlice));
    const secret = /^secret: +([A-Z2-7]{32})$/m.exec(enabled)?.[1] as string;
    const codes = [...enabled.matchAll(/^ {2}([a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4}-[a-z2-7]{4})$/gm)].map((match) => match[1]);
    assert.equal(codes.length, 10);
    assert.equal(enabled, [
      'Second factor enrolled for 2 "alice", pending until confirmed (cmi users two-factor confirm alice CODE). Shown once:',
      `otpauth URI:    otpauth://totp/cmi:alice?secret=${secret}&issuer=cmi&algorithm=SHA1&digits=6&period=30`,
      `secret:         ${secret}`,
      'recovery codes:',
      ...codes.map((code) => `  ${code}`),
      '',
    ].join('\n'));
    const code = authenticator.clone({ epoch: t.time.clock().getTime() }).generate(secret);
    assert.equal(succeeded(await cmi(['confirm', 'alice', code], asAlice)), 'Second factor of 2 "alice" enabled at 2026-11-20T10:00:00+00:00 (10 recovery codes)\n');
    assert.equal(succeeded(await cmi(['show', '2'], asAdmin)), 'enabled:             true\nconfirmed_at:        2026-11-20T10:00:00+00:00\nrecovery_codes_left: 10\n');
    const refused = await cmi(['show', 'alice'], asAlice);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /This account has a second factor: use one of its API keys, or sign in to the console/);
    assert.notEqual(refused.code, 0);
    assert.equal(succeeded(await cmi(['disable', 'alice'], asAdmin)), 'Second factor of 2 "alice" removed\n');
    assert.equal(succeeded(await cmi(['show', 'alice'], asAlice)), 'enabled:             false\nconfirmed_at:        -\nrecovery_codes_left: 0\n');
  });
});
