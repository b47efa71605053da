import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ADMIN, ALICE, createTestApp, listenLocally, type TestApp } from './support/app.js';
import { type Finished, runCmi } from './support/cli.js';
import { type Slapd, startSlapd } from './support/slapd.js';
import { freePort } from './support/throwaway-postgres.js';

const OIDC_SECRET = 'oidc-client-secret-cli-1';
const SECOND_OIDC_SECRET = 'oidc-client-secret-cli-2';
const BIND_PASSWORD_WRONG_PLACE = 'typed-on-the-command-line';

/**
 * `cmi identity-providers ls|show|add|edit|rm` (docs/cli.md#cmi-identity-providers) against a real cmi,
 * in order, and `cmi doctor`'s check of each enabled provider (docs/operations.md#cmi-doctor) against a
 * closed port and a real OpenLDAP slapd (test/support/slapd.ts).
 */
describe('cmi identity-providers', { timeout: 60_000 }, () => {
  let t: TestApp;
  let url: string;
  let home: string;
  let env: Record<string, string>;
  let slapd: Slapd;
  /** Everything every command printed, searched for secrets at the end. */
  const printed: string[] = [];

  before(async () => {
    t = await createTestApp();
    url = `http://127.0.0.1:${await listenLocally(t.app)}`;
    home = mkdtempSync(join(tmpdir(), 'cmi-cli-identity-'));
    env = {
      XDG_CONFIG_HOME: join(home, 'config'), CMI_URL: url, CMI_USER: ADMIN.login, CMI_PASSWORD: ADMIN.password, CMI_API_KEY: '', CMI_PROFILE: '', NO_COLOR: '',
      CMI_PROVIDER_CLIENT_SECRET: '', CMI_PROVIDER_BIND_PASSWORD: '',
    };
    const group = await t.app.inject({ method: 'POST', url: '/user_groups.json', headers: { authorization: t.adminAuth }, payload: { user_group: { label: 'Helpdesk' } } });
    assert.equal(group.statusCode, 201, group.body);
    slapd = await startSlapd();
  });
  after(async () => {
    await slapd?.close();
    await t.close();
    rmSync(home, { recursive: true, force: true });
  });

  const cmi = async (args: string[], extra: Record<string, string> = {}) => {
    const res = await runCmi(args, { ...env, ...extra });
    printed.push(res.stdout, res.stderr);
    return res;
  };
  function succeeded(res: Finished, stdout: string): void {
    assert.deepEqual([res.stderr, res.code], ['', 0]);
    assert.equal(res.stdout, stdout);
  }
  const stored = async (id: number) => {
    const row = await t.database.db.selectFrom('identity_providers').select(['settings', 'mappings', 'enabled', 'jit_provisioning', 'label']).where('id', '=', id).executeTakeFirstOrThrow();
    return { ...row, settings: JSON.parse(row.settings) as Record<string, unknown>, mappings: JSON.parse(row.mappings) as unknown };
  };

  it('add: settings from --setting, the secret from the environment, --map by role and user group names; show prints every setting but the secret', async () => {
    const made = await cmi([
      'identity-providers', 'add', '--kind', 'oidc', '--label', 'Corp SSO',
      '--setting', 'issuer=https://sso.example.com/realms/corp', '--setting', 'client_id=cmi', '--setting', 'scopes=openid,email,groups',
      '--map', 'cmi-admins=admin', '--map', 'cn=support,ou=groups,dc=example,dc=org=user,admin:Helpdesk', '--jit',
    ], { CMI_PROVIDER_CLIENT_SECRET: OIDC_SECRET, CMI_PROVIDER_BIND_PASSWORD: BIND_PASSWORD_WRONG_PLACE });
    succeeded(made, 'Created identity provider 1 "Corp SSO" (oidc)\n');
    const row = await stored(1);
    // The secret reached the server; the LDAP one, not a setting of OIDC, was not sent.
    assert.equal(row.settings.client_secret, OIDC_SECRET);
    assert.deepEqual(row.settings.scopes, ['openid', 'email', 'groups']);
    assert.deepEqual(row.mappings, [{ group: 'cmi-admins', role_ids: [1], user_group_id: null }, { group: 'cn=support,ou=groups,dc=example,dc=org', role_ids: [2, 1], user_group_id: 1 }]);
    assert.deepEqual([row.enabled, row.jit_provisioning], [1, 1]);
    succeeded(await cmi(['identity-providers', 'show', '1']), [
      'id:                     1',
      'kind:                   oidc',
      'label:                  Corp SSO',
      'enabled:                true',
      'jit_provisioning:       true',
      'settings.issuer:        https://sso.example.com/realms/corp',
      'settings.client_id:     cmi',
      'settings.client_secret: (write-only, never shown)',
      'settings.scopes:        openid,email,groups',
      'settings.login_claim:   preferred_username',
      'settings.email_claim:   email',
      'settings.groups_claim:  groups',
      'mappings[0]:            cmi-admins=admin',
      'mappings[1]:            cn=support,ou=groups,dc=example,dc=org=user,admin:helpdesk',
      'created_at:             2026-11-20T10:00:00+00:00',
      'updated_at:             2026-11-20T10:00:00+00:00',
      '',
    ].join('\n'));
    for (const format of ['json', 'xml'] as const) {
      const api = await t.app.inject({ method: 'GET', url: `/sysadmin_tools/identity_providers/1.${format}`, headers: { authorization: t.adminAuth } });
      // The XML body ends with its newline; the JSON one gets one, as every output.
      succeeded(await cmi(['identity-providers', 'show', '1', `--${format}`]), format === 'xml' ? api.body : `${api.body}\n`);
    }
  });

  it('refuses a secret as an option, a bad --setting or --map, and prints the server\'s 422 a field a line', async () => {
    const secret = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--setting', `client_secret=${BIND_PASSWORD_WRONG_PLACE}`]);
    assert.deepEqual([secret.code, secret.stdout, secret.stderr], [2, '', 'cmi: client_secret is a secret: give it in env CMI_PROVIDER_CLIENT_SECRET or with --setting-file client_secret=PATH, never as an option (every local user sees a command\'s options in the process list)\n']);
    const shape = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--setting', 'issuer']);
    assert.deepEqual([shape.code, shape.stderr], [2, 'cmi: --setting must be NAME=VALUE, e.g. --setting issuer=https://sso.example.com (got "issuer")\n']);
    const map = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--map', 'ops']);
    assert.deepEqual([map.code, map.stderr], [2, 'cmi: --map must be GROUP=ROLE[,ROLE][:USER_GROUP], e.g. --map cmi-admins=admin or --map "cn=ops,ou=groups,dc=example,dc=org=support:ops" (got "ops")\n']);
    const role = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--map', 'ops=nobody']);
    assert.deepEqual([role.code, role.stderr], [2, 'cmi: no role "nobody" (give an id, an identifier or a label)\n']);
    const kind = await cmi(['identity-providers', 'add', '--kind', 'oauth', '--label', 'X']);
    assert.deepEqual([kind.code, kind.stderr], [2, 'cmi: --kind must be one of oidc, saml, ldap (got "oauth")\n']);
    const refused = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--setting', 'issuer=http://sso.example.com', '--setting', 'client_id=a', '--setting', 'colour=red']);
    assert.deepEqual([refused.code, refused.stdout, refused.stderr], [1, '', [
      'cmi: settings.colour is not a setting of an oidc provider (its settings: issuer, client_id, client_secret, scopes, login_claim, email_claim, groups_claim)',
      '',
    ].join('\n')]);
    const blank = await cmi(['identity-providers', 'add', '--kind', 'oidc', '--label', 'X', '--setting', 'issuer=http://sso.example.com', '--setting', 'client_id=a']);
    assert.deepEqual([blank.code, blank.stdout, blank.stderr], [1, '', [
      'cmi: settings.client_secret can\'t be blank for an oidc provider',
      'cmi: settings.issuer must be an https URL without query or fragment (http only for this machine: localhost, 127.0.0.1, ::1)',
      '',
    ].join('\n')]);
    assert.equal(Number((await t.database.db.selectFrom('identity_providers').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 1);
  });

  it('edit changes what its options name, keeps the secret, asks for it again when the issuer moves; ls lists the providers', async () => {
    succeeded(await cmi(['identity-providers', 'edit', '1', '--label', 'Corp SSO (old)', '--disable', '--no-jit', '--setting', 'scopes=openid,email', '--no-map']), 'Updated identity provider 1 "Corp SSO (old)" (oidc)\n');
    const row = await stored(1);
    assert.deepEqual([row.label, row.enabled, row.jit_provisioning, row.mappings, row.settings.scopes, row.settings.client_secret], ['Corp SSO (old)', 0, 0, [], ['openid', 'email'], OIDC_SECRET]);
    const moved = await cmi(['identity-providers', 'edit', '1', '--setting', 'issuer=https://sso2.example.com']);
    assert.deepEqual([moved.code, moved.stderr], [1, 'cmi: settings.client_secret must be given again when issuer or client_id changes\n']);
    // The secret again, from a file (a systemd credential, a mounted secret): its last newline dropped.
    const file = join(home, 'client-secret');
    writeFileSync(file, `${SECOND_OIDC_SECRET}\n`);
    succeeded(await cmi(['identity-providers', 'edit', '1', '--setting', 'issuer=https://sso2.example.com', '--setting-file', `client_secret=${file}`]), 'Updated identity provider 1 "Corp SSO (old)" (oidc)\n');
    assert.equal((await stored(1)).settings.client_secret, SECOND_OIDC_SECRET);
    const nothing = await cmi(['identity-providers', 'edit', '1']);
    assert.deepEqual([nothing.code, nothing.stderr], [2, 'cmi: nothing to change: give at least one of the options (cmi help identity-providers edit)\n']);
    const unreadable = await cmi(['identity-providers', 'edit', '1', '--setting-file', `client_secret=${join(home, 'none')}`]);
    assert.deepEqual([unreadable.code, unreadable.stderr], [2, `cmi: --setting-file client_secret: cannot read ${join(home, 'none')}: ENOENT\n`]);
    succeeded(await cmi(['identity-providers', 'add', '--kind', 'ldap', '--label', 'Closed directory', '--setting', `url=ldap://127.0.0.1:${await freePort()}`,
      '--setting', 'user_filter=uid={login},ou=people,dc=example,dc=org', '--setting', 'allow_basic_auth=true']), 'Created identity provider 2 "Closed directory" (ldap)\n');
    succeeded(await cmi(['identity-providers', 'ls']), [
      'ID  KIND  LABEL             ENABLED  JIT',
      '1   oidc  Corp SSO (old)    no       no',
      '2   ldap  Closed directory  yes      no',
      '2 of 2 identity providers (page 1 of 1)',
      '',
    ].join('\n'));
    const api = await t.app.inject({ method: 'GET', url: '/sysadmin_tools/identity_providers.json', headers: { authorization: t.adminAuth } });
    succeeded(await cmi(['identity-providers', 'ls', '--all', '--json']), `${api.body}\n`);
  });

  it('doctor: an enabled directory that cannot be reached is a failure with the module\'s message (exit 1); a real slapd answers; a disabled provider is not checked', async () => {
    const port = new URL(((await stored(2)).settings.url as string)).port;
    const doctorEnv = { DATABASE_URL: t.config.databaseUrl, CMI_ALERT_WEBHOOK_URL: '', CMI_REPORT_WEBHOOK_URL: '', LOG_LEVEL: 'silent' };
    const identityLines = (res: Finished) => res.stdout.trimEnd().split('\n').filter((line) => line.includes(' identity: '));
    const first = await runCmi(['doctor'], doctorEnv);
    assert.equal(first.code, 1, first.stdout);
    assert.deepEqual(identityLines(first), [
      `fail identity: identity provider 2 "Closed directory" (ldap): The LDAP directory ldap://127.0.0.1:${port} is unavailable: it could not be reached (the first exchange): connect ECONNREFUSED 127.0.0.1:${port}; fix: start the provider or let this machine reach it, or correct its settings (cmi identity-providers edit 2); meanwhile its people cannot sign in through it, password sign-ins and API keys still work (docs/security.md#identity-providers)`,
    ]);
    const ca = join(home, 'ca.pem');
    writeFileSync(ca, slapd.caCertificate);
    succeeded(await cmi(['identity-providers', 'add', '--kind', 'ldap', '--label', 'Directory', '--setting', `url=${slapd.ldapsUrl}`, '--setting', `bind_dn=${slapd.serviceDn}`,
      '--setting', `base_dn=${slapd.baseDn}`, '--setting', 'user_filter=(uid={login})', '--setting-file', `ca_certificate=${ca}`], { CMI_PROVIDER_BIND_PASSWORD: slapd.servicePassword }), 'Created identity provider 3 "Directory" (ldap)\n');
    const row = await stored(3);
    assert.deepEqual([row.settings.bind_password, row.settings.ca_certificate], [slapd.servicePassword, slapd.caCertificate.replace(/\r?\n$/, '')]);
    const second = await runCmi(['doctor', '--json'], doctorEnv);
    assert.equal(second.code, 1, second.stdout);
    const checks = (JSON.parse(second.stdout) as { checks: Array<{ check: string; state: string; message: string }> }).checks.filter((check) => check.check === 'identity');
    assert.deepEqual(checks.map(({ state, message }) => `${state} ${message}`), [
      `fail identity provider 2 "Closed directory" (ldap): The LDAP directory ldap://127.0.0.1:${port} is unavailable: it could not be reached (the first exchange): connect ECONNREFUSED 127.0.0.1:${port}`,
      'ok identity provider 3 "Directory" (ldap) answers',
    ]);
    const shown = await cmi(['identity-providers', 'show', '3']);
    assert.match(shown.stdout, /^settings\.bind_password:\s+\(write-only, never shown\)$/m);
    assert.match(shown.stdout, /^settings\.ca_certificate:\s+-----BEGIN CERTIFICATE----- … \(\d+ lines\)$/m);
    assert.ok(!second.stdout.includes(slapd.servicePassword));
  });

  it('rm deletes a provider; an ordinary user is refused the commands; no secret was ever printed', async () => {
    succeeded(await cmi(['identity-providers', 'rm', '1']), 'Deleted identity provider 1 "Corp SSO (old)" (oidc); the accounts it signed in stay, unlinked\n');
    const gone = await cmi(['identity-providers', 'show', '1']);
    assert.deepEqual([gone.code, gone.stderr], [1, 'cmi: Resource not found\n']);
    const alice = await cmi(['identity-providers', 'ls'], { CMI_USER: ALICE.login, CMI_PASSWORD: ALICE.password });
    assert.deepEqual([alice.code, alice.stdout, alice.stderr], [1, '', 'cmi: You are not authorized to perform this action (needs identity_providers.read)\n']);
    const all = printed.join('\n');
    for (const secret of [OIDC_SECRET, SECOND_OIDC_SECRET, slapd.servicePassword]) assert.ok(!all.includes(secret), `${secret} was printed`);
  });
});
