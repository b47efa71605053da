import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from 'ldapts';
import { type ExternalIdentity, type LdapSettings, ProviderUnavailable } from '../src/identity/external-identity.js';
import { ldapAuthenticate, ldapCheck, ldapDnValue, ldapFilterValue } from '../src/identity/ldap.js';
import { createTestApp, type TestApp } from './support/app.js';
import { callApi } from './support/http.js';
import { type Slapd, startSlapd } from './support/slapd.js';
import { freePort } from './support/throwaway-postgres.js';

// docs/sso-ldap.md: search-then-bind and the DN template against a real OpenLDAP slapd (test/support/slapd.ts),
// over ldaps:// and StartTLS with a CA made by openssl; the escapings with RFC 4515's and RFC 4514's examples.

describe('ldapFilterValue: RFC 4515 section 3', () => {
  it("escapes the five characters RFC 4515 names, as its examples write them", () => {
    assert.equal(`(o=${ldapFilterValue('Parens R Us (for all your parenthetical needs)')})`, '(o=Parens R Us \\28for all your parenthetical needs\\29)');
    assert.equal(`(cn=*${ldapFilterValue('*')}*)`, '(cn=*\\2a*)');
    assert.equal(`(filename=${ldapFilterValue('C:\\MyFile')})`, '(filename=C:\\5cMyFile)');
    assert.equal(ldapFilterValue('a\u0000b'), 'a\\00b');
  });
  it('leaves every other character, UTF-8 included, as it is', () => {
    assert.equal(ldapFilterValue('Lučić = &|!~<>,+"#; é'), 'Lučić = &|!~<>,+"#; é');
    assert.equal(ldapFilterValue(')(uid=*'), '\\29\\28uid=\\2a');
  });
});

describe('ldapDnValue: RFC 4514 section 2.4', () => {
  it("escapes the specials with a backslash, as RFC 4514's examples write them", () => {
    assert.equal(`CN=${ldapDnValue('James "Jim" Smith, III')},DC=example,DC=net`, 'CN=James \\"Jim\\" Smith\\, III,DC=example,DC=net');
    assert.equal(`CN=${ldapDnValue('Before\rAfter')},DC=example,DC=net`, 'CN=Before\\0dAfter,DC=example,DC=net');
    assert.equal(ldapDnValue('a+b;c<d>e\\f'), 'a\\+b\\;c\\<d\\>e\\\\f');
    assert.equal(ldapDnValue('nul\u0000'), 'nul\\00');
  });
  it('escapes a leading space or #, and a trailing space, and only those', () => {
    assert.equal(ldapDnValue(' lead'), '\\ lead');
    assert.equal(ldapDnValue('#hash'), '\\#hash');
    assert.equal(ldapDnValue('trail '), 'trail\\ ');
    assert.equal(ldapDnValue(' '), '\\ ');
    assert.equal(ldapDnValue('in side#x'), 'in side#x');
    assert.equal(ldapDnValue('Lučić=é'), 'Lučić=é');
  });
});

/** A self-signed CA of no directory, made by openssl. */
function strangerCa(dir: string): string {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'stranger.key'), '-out', join(dir, 'stranger.pem'),
    '-days', '2', '-subj', '/CN=stranger CA', '-addext', 'basicConstraints=critical,CA:TRUE'], { stdio: 'ignore' });
  return readFileSync(join(dir, 'stranger.pem'), 'utf8');
}

/** A TCP server that takes connections and never says a word: a directory that hangs. */
async function silentServer(): Promise<{ url: (scheme: string) => string; close: () => Promise<void> }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: (scheme) => `${scheme}://127.0.0.1:${port}`,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('ldapAuthenticate and ldapCheck against OpenLDAP', { timeout: 60_000 }, () => {
  let slapd: Slapd;
  let dir: string;
  let stranger: string;
  let closedUrl: string;
  const uuids = new Map<string, string>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cmi-ldap-test-'));
    stranger = strangerCa(dir);
    slapd = await startSlapd({
      users: [
        { uid: 'alice', password: 'alice-password', mail: 'alice@example.org', givenName: 'Alice', sn: 'Liddell' },
        { uid: 'bob', password: 'bob-password', mail: 'bob@example.org', givenName: 'Bob', sn: 'Builder' },
        { uid: 'o(dd)*one', password: 'odd-password', mail: 'odd@example.org' },
        { uid: 'smith, john', password: 'smith-password', mail: 'smith@example.org', givenName: 'John', sn: 'Smith' },
        { uid: 'carol', password: 'carol-password', mail: 'carol@example.org' },
        { uid: 'dave', password: 'dave-password', mail: 'dave@example.org' },
      ],
      acl: [
        // carol's entryUUID is hidden (as on a directory without one); dave may bind but not read his own entry.
        'access to dn.exact="uid=carol,ou=people,dc=example,dc=org" attrs=entryUUID by * none',
        'access to dn.exact="uid=dave,ou=people,dc=example,dc=org" by anonymous auth by * none',
      ],
      groups: [{ cn: 'ops', members: ['alice'] }, { cn: 'dev', members: ['alice', 'bob'] }],
    });
    closedUrl = `ldap://127.0.0.1:${await freePort()}`;
    // Each entry's entryUUID, as the administrator reads it.
    const admin = new Client({ url: slapd.ldapUrl });
    await admin.bind(slapd.rootDn, slapd.rootPassword);
    const { searchEntries } = await admin.search(`ou=people,${slapd.baseDn}`, { filter: '(uid=*)', attributes: ['uid', 'entryUUID'] });
    for (const entry of searchEntries) uuids.set(String(entry.uid), String(entry.entryUUID));
    await admin.unbind();
  });
  after(async () => {
    await slapd?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Search-then-bind over ldaps:// with the directory's CA, changed by `changes`. */
  const settings = (changes: Partial<LdapSettings> = {}): LdapSettings => ({
    url: slapd.ldapsUrl, bind_dn: slapd.serviceDn, bind_password: slapd.servicePassword, base_dn: slapd.baseDn,
    user_filter: '(&(objectClass=inetOrgPerson)(uid={login}))', group_attribute: 'memberOf', start_tls: false,
    ca_certificate: slapd.caCertificate, allow_basic_auth: false, ...changes,
  });
  /** The DN template form: no service account. */
  const template = (changes: Partial<LdapSettings> = {}) => settings({ bind_dn: '', bind_password: '', base_dn: '', user_filter: `uid={login},ou=people,${slapd.baseDn}`, ...changes });

  const alice = (): ExternalIdentity => ({
    subject: uuids.get('alice') as string, login: 'alice', email: 'alice@example.org',
    groups: [slapd.groupDn('ops'), slapd.groupDn('dev')], firstName: 'Alice', lastName: 'Liddell',
  });
  /** The identity with its groups in a set order (the directory's order of memberOf values is its own). */
  const sorted = (identity: ExternalIdentity | undefined) => identity && { ...identity, groups: [...identity.groups].sort() };

  /** Runs `work`, which must fail with ProviderUnavailable matching `pattern` and naming no password. */
  async function unavailable(work: Promise<unknown>, pattern: RegExp): Promise<void> {
    await assert.rejects(work, (error: Error) => {
      assert.ok(error instanceof ProviderUnavailable, `not ProviderUnavailable: ${error.name}: ${error.message}`);
      assert.match(error.message, pattern);
      for (const secret of ['alice-password', slapd.servicePassword, 'wrong-service-password']) assert.ok(!error.message.includes(secret), `a password in: ${error.message}`);
      return true;
    });
  }

  it('search-then-bind over ldaps:// gives the entry: entryUUID subject, mail, names, memberOf group DNs', async () => {
    assert.match(uuids.get('alice') ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual(sorted(await ldapAuthenticate(settings(), 'alice', 'alice-password')), sorted(alice()));
    assert.deepEqual(await ldapAuthenticate(settings(), 'bob', 'bob-password'), {
      subject: uuids.get('bob'), login: 'bob', email: 'bob@example.org', groups: [slapd.groupDn('dev')], firstName: 'Bob', lastName: 'Builder',
    });
  });

  it('search-then-bind over ldap:// upgraded by StartTLS gives the same identity', async () => {
    assert.deepEqual(sorted(await ldapAuthenticate(settings({ url: slapd.ldapUrl, start_tls: true }), 'alice', 'alice-password')), sorted(alice()));
  });

  it('the login is trimmed; the group attribute is matched case aside; an entry without one has no groups', async () => {
    assert.deepEqual(sorted(await ldapAuthenticate(settings({ group_attribute: 'MEMBEROF' }), '  alice ', 'alice-password')), sorted(alice()));
    assert.deepEqual(await ldapAuthenticate(settings(), 'o(dd)*one', 'odd-password'), {
      subject: uuids.get('o(dd)*one'), login: 'o(dd)*one', email: 'odd@example.org', groups: [], firstName: undefined, lastName: 'o(dd)*one',
    });
  });

  it('the DN template binds as the entry itself and reads it as itself', async () => {
    assert.deepEqual(sorted(await ldapAuthenticate(template(), 'alice', 'alice-password')), sorted(alice()));
    assert.deepEqual(sorted(await ldapAuthenticate(template({ url: slapd.ldapUrl, start_tls: true }), 'alice', 'alice-password')), sorted(alice()));
    // A comma in the login is the value's, not the DN's (RFC 4514).
    assert.deepEqual(await ldapAuthenticate(template(), 'smith, john', 'smith-password'), {
      subject: uuids.get('smith, john'), login: 'smith, john', email: 'smith@example.org', groups: [], firstName: 'John', lastName: 'Smith',
    });
    assert.equal(await ldapAuthenticate(template(), 'smith, john', 'alice-password'), undefined);
  });

  it('a wrong password, an unknown login, several entries alike: undefined, all the same', async () => {
    assert.equal(await ldapAuthenticate(settings(), 'alice', 'bob-password'), undefined);
    assert.equal(await ldapAuthenticate(settings(), 'nobody', 'alice-password'), undefined);
    assert.equal(await ldapAuthenticate(settings({ user_filter: '(|(uid={login})(objectClass=inetOrgPerson))' }), 'alice', 'alice-password'), undefined);
    assert.equal(await ldapAuthenticate(template(), 'alice', 'bob-password'), undefined);
    assert.equal(await ldapAuthenticate(template(), 'nobody', 'alice-password'), undefined);
    // A DN the directory cannot parse (a DN template without the escaping's help) is no one either.
    assert.equal(await ldapAuthenticate(template({ user_filter: '{login}' }), 'not a dn', 'alice-password'), undefined);
  });

  it("an entry without entryUUID: its DN, lowercased, is the subject", async () => {
    // The administrator sees it; the service account and carol herself do not.
    assert.match(uuids.get('carol') ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual(await ldapAuthenticate(settings(), 'carol', 'carol-password'), {
      subject: 'uid=carol,ou=people,dc=example,dc=org', login: 'carol', email: 'carol@example.org', groups: [], firstName: undefined, lastName: 'carol',
    });
    assert.equal((await ldapAuthenticate(template({ user_filter: `UID={login},OU=People,${slapd.baseDn}` }), 'carol', 'carol-password'))?.subject, 'uid=carol,ou=people,dc=example,dc=org');
  });

  it('a DN template whose entry cannot read itself: ProviderUnavailable, not an identity without its entryUUID', async () => {
    await unavailable(ldapAuthenticate(template(), 'dave', 'dave-password'),
      /^The LDAP directory ldaps:\/\/127\.0\.0\.1:\d+ let uid=dave,ou=people,dc=example,dc=org bind but not read its own entry: let it read its entryUUID, mail, givenName, sn and memberOf$/);
    assert.equal(await ldapAuthenticate(template(), 'dave', 'wrong-password'), undefined);
  });

  it('a url that is not LDAP: ProviderUnavailable, saying so', async () => {
    await unavailable(ldapAuthenticate(settings({ url: 'https://127.0.0.1' }), 'alice', 'alice-password'), /^The LDAP directory's url is not an ldap:\/\/ or ldaps:\/\/ URL: correct the provider's settings$/);
    await unavailable(ldapCheck(settings({ url: 'not a url' })), /url is not an ldap:\/\/ or ldaps:\/\/ URL/);
  });

  it('a user_filter the client cannot parse: ProviderUnavailable, saying so', async () => {
    await unavailable(ldapAuthenticate(settings({ user_filter: '(uid={login}' }), 'alice', 'alice-password'), /is unavailable: the search for the user failed: Unbalanced parens: \(uid=alice\. Full string: \(uid=alice$/);
  });

  it('a changed password takes effect at once', async () => {
    await slapd.setPassword('bob', 'bob-new-password');
    assert.equal(await ldapAuthenticate(settings(), 'bob', 'bob-password'), undefined);
    assert.equal((await ldapAuthenticate(settings(), 'bob', 'bob-new-password'))?.login, 'bob');
  });

  it('an empty password never binds, though this directory takes a DN with one as an anonymous bind', async () => {
    // The server would accept it: the bind succeeds, as nobody.
    const direct = new Client({ url: slapd.ldapUrl });
    await direct.bind(slapd.userDn('alice'), '');
    assert.equal((await direct.exop('1.3.6.1.4.1.4203.1.11.3')).value, '');
    await direct.unbind();
    // cmi refuses it, in both forms, and over plain loopback ldap:// too.
    assert.equal(await ldapAuthenticate(settings(), 'alice', ''), undefined);
    assert.equal(await ldapAuthenticate(template(), 'alice', ''), undefined);
    assert.equal(await ldapAuthenticate(settings({ url: slapd.ldapUrl }), 'alice', ''), undefined);
    assert.equal(await ldapAuthenticate(settings(), 'alice', 'alice-password\u0000'), undefined);
  });

  it('an empty password, a NUL, or a login empty, too long or with a control character: undefined without a word to the directory', async () => {
    // Nothing listens at closedUrl: had cmi tried, it would be ProviderUnavailable.
    await unavailable(ldapAuthenticate(settings({ url: closedUrl }), 'alice', 'alice-password'), /ECONNREFUSED/);
    for (const [login, password] of [['alice', ''], ['alice', 'a\u0000b'], ['', 'alice-password'], ['   ', 'alice-password'], ['a'.repeat(256), 'alice-password'], ['al\nice', 'alice-password'], ['al\u007fice', 'alice-password']]) {
      assert.equal(await ldapAuthenticate(settings({ url: closedUrl }), login as string, password as string), undefined, JSON.stringify(login));
    }
    // 255 characters are still a login: tried.
    await unavailable(ldapAuthenticate(settings({ url: closedUrl }), 'a'.repeat(255), 'alice-password'), /ECONNREFUSED/);
  });

  it('filter injection: a login with *, ( or ) is a value, never a wildcard or a clause', async () => {
    // Unescaped, each of these would find alice alone, and her password would let it in.
    assert.equal(await ldapAuthenticate(settings(), 'al*', 'alice-password'), undefined);
    assert.equal(await ldapAuthenticate(settings(), 'alice)(uid=*', 'alice-password'), undefined);
    assert.equal(await ldapAuthenticate(settings(), '*)(objectClass=inetOrgPerson)(uid=alice', 'alice-password'), undefined);
    assert.equal(await ldapAuthenticate(settings(), 'alice\\', 'alice-password'), undefined);
    // The login with those characters, as it is, finds its own entry.
    assert.equal((await ldapAuthenticate(settings(), 'o(dd)*one', 'odd-password'))?.subject, uuids.get('o(dd)*one'));
  });

  it('a CA that is not the directory\'s: ProviderUnavailable, over ldaps:// and over StartTLS', async () => {
    await unavailable(ldapAuthenticate(settings({ ca_certificate: stranger }), 'alice', 'alice-password'), /^The LDAP directory ldaps:\/\/127\.0\.0\.1:\d+ is unavailable: its TLS certificate was not accepted \(the service account's bind\): self-signed certificate in certificate chain \(SELF_SIGNED_CERT_IN_CHAIN\)$/);
    await unavailable(ldapAuthenticate(settings({ url: slapd.ldapUrl, start_tls: true, ca_certificate: stranger }), 'alice', 'alice-password'), /^The LDAP directory ldap:\/\/127\.0\.0\.1:\d+ is unavailable: its TLS certificate was not accepted \(StartTLS\): self-signed certificate in certificate chain/);
    // No CA given: the system's, which do not know this one.
    await unavailable(ldapAuthenticate(settings({ ca_certificate: '' }), 'alice', 'alice-password'), /its TLS certificate was not accepted/);
    await unavailable(ldapCheck(settings({ ca_certificate: stranger })), /its TLS certificate was not accepted/);
    await unavailable(ldapCheck(template({ url: slapd.ldapUrl, start_tls: true, ca_certificate: stranger })), /its TLS certificate was not accepted \(StartTLS\)/);
  });

  it('the certificate is checked for the host: localhost is in it, ::ffff:127.0.0.1 (the same server) is not', async () => {
    const [ldapsPort, ldapPort] = [new URL(slapd.ldapsUrl).port, new URL(slapd.ldapUrl).port];
    assert.equal((await ldapAuthenticate(settings({ url: `ldaps://localhost:${ldapsPort}` }), 'alice', 'alice-password'))?.login, 'alice');
    assert.equal((await ldapAuthenticate(settings({ url: `ldap://localhost:${ldapPort}`, start_tls: true }), 'alice', 'alice-password'))?.login, 'alice');
    const altnames = /its TLS certificate was not accepted \((the service account's bind|StartTLS)\): Hostname\/IP does not match certificate's altnames: .*\(ERR_TLS_CERT_ALTNAME_INVALID\)$/;
    await unavailable(ldapAuthenticate(settings({ url: `ldaps://[::ffff:127.0.0.1]:${ldapsPort}` }), 'alice', 'alice-password'), altnames);
    await unavailable(ldapAuthenticate(settings({ url: `ldap://[::ffff:127.0.0.1]:${ldapPort}`, start_tls: true }), 'alice', 'alice-password'), altnames);
  });

  it("the service account's password wrong: ProviderUnavailable, not the user's fault", async () => {
    await unavailable(ldapAuthenticate(settings({ bind_password: 'wrong-service-password' }), 'alice', 'alice-password'), /refused the service account cn=cmi-service,ou=services,dc=example,dc=org: check bind_dn and bind_password/);
    await unavailable(ldapCheck(settings({ bind_password: 'wrong-service-password' })), /refused the service account/);
  });

  it('ldapCheck: connects (StartTLS), binds the service account and reads base_dn; without bind_dn, any answer', async () => {
    await ldapCheck(settings());
    await ldapCheck(settings({ url: slapd.ldapUrl, start_tls: true }));
    await ldapCheck(settings({ url: slapd.ldapUrl }));
    await ldapCheck(template());
    await ldapCheck(template({ url: slapd.ldapUrl, start_tls: true }));
    await unavailable(ldapCheck(settings({ base_dn: 'ou=missing,dc=example,dc=org' })), /is unavailable: reading base_dn ou=missing,dc=example,dc=org failed: No such object \(LDAP result 32\)$/);
    await unavailable(ldapCheck(settings({ url: closedUrl })), /^The LDAP directory ldap:\/\/127\.0\.0\.1:\d+ is unavailable: it could not be reached \(the service account's bind\): connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
  });

  it('a directory that never answers: ProviderUnavailable once the timeout passes', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      await unavailable(ldapAuthenticate(settings({ url: silent.url('ldaps') }), 'alice', 'alice-password', 300), /is unavailable: it could not be reached \(the service account's bind\): Connection timeout$/);
      await unavailable(ldapAuthenticate(template({ url: silent.url('ldap'), start_tls: true }), 'alice', 'alice-password', 300), /is unavailable: StartTLS failed: ExtendedRequest: Operation timed out$/);
      await unavailable(ldapCheck(template({ url: silent.url('ldap') }), 300), /is unavailable: the first exchange failed: ExtendedRequest: Operation timed out$/);
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    } finally {
      await silent.close();
    }
  });

  it('the directory stopped: ProviderUnavailable, for a sign-in and for ldapCheck (this test stops it: last)', async () => {
    await slapd.close();
    await unavailable(ldapAuthenticate(settings(), 'alice', 'alice-password'), /ECONNREFUSED/);
    await unavailable(ldapAuthenticate(template({ url: slapd.ldapUrl, start_tls: true }), 'alice', 'alice-password'), /is unavailable: it could not be reached \(StartTLS\): connect ECONNREFUSED/);
    await unavailable(ldapCheck(settings()), /ECONNREFUSED/);
  });
});

// A person the directory stops vouching for (docs/security.md#people-who-move-on-or-leave): through the
// whole server, a real slapd and a provider mapping the directory's cmi-admins group to administrator.
describe('a person who moves on or leaves, as the directory says', { timeout: 60_000 }, () => {
  let t: TestApp;
  let slapd: Slapd;
  const consoleCookie = /^_cmi_console=([^;\s]+);/;
  before(async () => {
    [t, slapd] = await Promise.all([
      createTestApp(),
      startSlapd({
        users: [{ uid: 'lee', password: 'lee-directory-pw', mail: 'lee@example.com' }, { uid: 'kim', password: 'kim-directory-pw', mail: 'kim@example.com' }],
        groups: [{ cn: 'cmi-admins', members: ['lee', 'kim'] }],
      }),
    ]);
    const added = await callApi(t.app, 'POST', '/sysadmin_tools/identity_providers.json', {
      auth: t.adminAuth,
      body: { identity_provider: {
        kind: 'ldap', label: 'Corp LDAP', jit_provisioning: true,
        settings: { url: slapd.ldapsUrl, ca_certificate: slapd.caCertificate, bind_dn: slapd.serviceDn, bind_password: slapd.servicePassword, base_dn: slapd.baseDn, user_filter: '(&(objectClass=inetOrgPerson)(uid={login}))', allow_basic_auth: true },
        mappings: [{ group: 'cmi-admins', role_ids: [1], user_group_id: null }],
      } },
    });
    assert.equal(added.statusCode, 201, added.body);
  });
  after(async () => {
    await slapd?.close();
    await t?.close();
  });

  const consoleSignIn = (from: string) => t.app.inject({ method: 'POST', url: '/console/sign-in', remoteAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'login=lee&password=lee-directory-pw' });
  const rolesOfLee = async () => {
    const lee = await t.database.db.selectFrom('users').select('id').where('login', '=', 'lee').executeTakeFirstOrThrow();
    return (await t.database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', lee.id).execute()).map((row) => Number(row.role_id));
  };

  it('out of the group: its session keeps what it had until it signs in again (or its sessions are ended), then the role is gone', async () => {
    const basic = t.basic('lee', 'lee-directory-pw');
    const signedIn = await consoleSignIn('192.0.2.61');
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const cookie = `_cmi_console=${consoleCookie.exec(String(signedIn.headers['set-cookie']))?.[1]}`;
    assert.deepEqual(await rolesOfLee(), [1]);
    assert.equal((await t.app.inject({ url: '/console/identity-providers', headers: { cookie } })).statusCode, 200);

    await slapd.removeFromGroup('cmi-admins', 'lee');
    // Nothing asks the directory between sign-ins: the roles are the account's until the next one.
    assert.equal((await t.app.inject({ url: '/console/identity-providers', headers: { cookie } })).statusCode, 200);
    // The operator forces it: the sessions end, and the next sign-in maps the groups anew.
    const lee = await t.database.db.selectFrom('users').select('id').where('login', '=', 'lee').executeTakeFirstOrThrow();
    assert.equal((await callApi(t.app, 'DELETE', `/users/${lee.id}/sessions.json`, { auth: t.adminAuth })).statusCode, 204);
    const ended = await t.app.inject({ url: '/console/identity-providers', headers: { cookie } });
    assert.deepEqual([ended.statusCode, ended.headers.location], [303, '/console/sign-in?ended=1&next=%2Fconsole%2Fidentity-providers']);
    // An administrator's page no more (a plain user sees its own account in /users.json, so that proves nothing).
    assert.equal((await callApi(t.app, 'GET', '/sysadmin_tools/identity_providers.json', { auth: basic, from: '192.0.2.62' })).statusCode, 403);
    assert.deepEqual(await rolesOfLee(), [2]);
    const update = await t.database.db.selectFrom('audit_events').select(['credential', 'changes']).where('action', '=', 'user.update').where('target_id', '=', lee.id).execute();
    assert.deepEqual(update, [{ credential: 'sso', changes: JSON.stringify({ role_ids: [[1], [2]], user_group_id: [null, null], identity_provider_id: 1 }) }]);
  });

  it('gone from the directory: no sign-in opens the account any more, by the form or by Basic', async () => {
    await slapd.removeUser('lee');
    const refused = await consoleSignIn('192.0.2.63');
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['set-cookie'], undefined);
    assert.equal((await callApi(t.app, 'GET', '/version.json', { auth: t.basic('lee', 'lee-directory-pw'), from: '192.0.2.64' })).statusCode, 401);
    // The others of the directory are untouched.
    assert.equal((await callApi(t.app, 'GET', '/users.json', { auth: t.basic('kim', 'kim-directory-pw'), from: '192.0.2.64' })).statusCode, 200);
  });
});
