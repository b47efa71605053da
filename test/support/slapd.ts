import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Attribute, Change, Client, EqualityFilter } from 'ldapts';
import { freePort } from './throwaway-postgres.js';

/** A person the directory holds: `uid=<uid>,ou=people,<baseDn>`, an inetOrgPerson. */
export interface SlapdUser {
  uid: string;
  password: string;
  mail?: string;
  givenName?: string;
  sn?: string;
}

/** A group the directory holds: `cn=<cn>,ou=groups,<baseDn>`, a groupOfNames of the users named by uid. */
export interface SlapdGroup {
  cn: string;
  members: string[];
}

export interface Slapd {
  /** `ldap://127.0.0.1:<port>`: in the clear, offering StartTLS. */
  ldapUrl: string;
  /** `ldaps://127.0.0.1:<port>`: TLS from the first byte. */
  ldapsUrl: string;
  /** PEM of the CA that signed the server's certificate (valid for 127.0.0.1 and localhost). */
  caCertificate: string;
  baseDn: string;
  /** The DN of a user's entry under `ou=people` (its uid escaped as RFC 4514 says). */
  userDn: (uid: string) => string;
  groupDn: (cn: string) => string;
  /** The service account cmi searches with (`cn=cmi-service,ou=services,<baseDn>`). */
  serviceDn: string;
  servicePassword: string;
  /** The directory's administrator (the rootdn), for a test that changes entries itself. */
  rootDn: string;
  rootPassword: string;
  /** Changes a user's password, as its administrator would. */
  setPassword: (uid: string, password: string) => Promise<void>;
  /** Takes a user out of a group, as its administrator would when the person moves on. */
  removeFromGroup: (cn: string, uid: string) => Promise<void>;
  /** Deletes a user's entry (and its groups' member values), as its administrator would when the person leaves. */
  removeUser: (uid: string) => Promise<void>;
  /** Stops the server (SIGTERM, waited for) and removes its directory; twice is harmless. */
  close: () => Promise<void>;
}

const BASE_DN = 'dc=example,dc=org';
const ROOT_DN = `cn=admin,${BASE_DN}`;
const SERVICE_DN = `cn=cmi-service,ou=services,${BASE_DN}`;
/** How long slapd may take to answer its first bind, or to exit once told to. */
const START_LIMIT_MS = 15_000;
const STOP_LIMIT_MS = 5_000;

/** A CA and a server certificate it signed for 127.0.0.1 and localhost (P-256 keys: quick to make), in `dir`. */
function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const file = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2',
    '-subj', '/CN=cmi test LDAP CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1']);
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext')]);
  return { ca: file('ca.pem'), cert: file('server.pem'), key: file('server.key') };
}

/**
 * slapd.conf of a back_mdb database under `dc=example,dc=org` with the memberof overlay (a groupOfNames'
 * `member` gives its members `memberOf`). `allow bind_anon_dn`: a DN with an empty password is an
 * unauthenticated bind that succeeds, as many servers do, so a test can prove cmi never sends one.
 * Users read everything but passwords; anonymous may only bind; the test's `acl` lines come first.
 */
function slapdConf(dir: string, tls: { ca: string; cert: string; key: string }, rootPassword: string, acl: readonly string[]): string {
  return [
    ...['core', 'cosine', 'inetorgperson', 'nis'].map((schema) => `include /etc/ldap/schema/${schema}.schema`),
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    'moduleload memberof',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    `TLSCACertificateFile ${tls.ca}`,
    `TLSCertificateFile ${tls.cert}`,
    `TLSCertificateKeyFile ${tls.key}`,
    'allow bind_anon_dn',
    'database mdb',
    `suffix "${BASE_DN}"`,
    `rootdn "${ROOT_DN}"`,
    `rootpw ${rootPassword}`,
    `directory ${join(dir, 'db')}`,
    'maxsize 16777216',
    'overlay memberof',
    ...acl,
    'access to attrs=userPassword by self write by anonymous auth by * none',
    'access to * by users read by anonymous auth',
    '',
  ].join('\n');
}


/** A uid as a DN value: RFC 4514's specials after a backslash (written apart from src/identity/ldap.ts, which the tests check). */
const dnValue = (text: string) => text.replace(/["+,;<>\\]/g, (char) => `\\${char}`).replace(/^[ #]/, (char) => `\\${char}`).replace(/ $/, '\\ ');
const userDn = (uid: string) => `uid=${dnValue(uid)},ou=people,${BASE_DN}`;

/** Binds as the administrator on `url`, retried until slapd answers (bounded by START_LIMIT_MS). */
async function adminClient(url: string, rootPassword: string, slapd: ChildProcess, log: () => string): Promise<Client> {
  const deadline = Date.now() + START_LIMIT_MS;
  for (;;) {
    const client = new Client({ url, connectTimeout: 1000, timeout: 5000, autoRebind: true });
    try {
      await client.bind(ROOT_DN, rootPassword);
      return client;
    } catch (error) {
      await client.unbind().catch(() => undefined);
      if (slapd.exitCode !== null || slapd.signalCode !== null) throw new Error(`slapd exited at start: ${log()}`, { cause: error });
      if (Date.now() > deadline) throw new Error(`slapd did not answer within ${START_LIMIT_MS} ms (${(error as Error).message}): ${log()}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
}

/** The base, its three branches, the service account, the users, then the groups (so the overlay fills memberOf). */
async function seed(client: Client, servicePassword: string, users: readonly SlapdUser[], groups: readonly SlapdGroup[]): Promise<void> {
  await client.add(BASE_DN, { objectClass: ['dcObject', 'organization'], dc: 'example', o: 'Example' });
  for (const ou of ['people', 'groups', 'services']) await client.add(`ou=${ou},${BASE_DN}`, { objectClass: 'organizationalUnit', ou });
  await client.add(SERVICE_DN, { objectClass: ['organizationalRole', 'simpleSecurityObject'], cn: 'cmi-service', userPassword: servicePassword });
  for (const user of users) {
    await client.add(userDn(user.uid), {
      objectClass: 'inetOrgPerson', uid: user.uid, cn: [user.givenName, user.sn].filter(Boolean).join(' ') || user.uid, sn: user.sn ?? user.uid,
      ...(user.givenName === undefined ? {} : { givenName: user.givenName }), ...(user.mail === undefined ? {} : { mail: user.mail }), userPassword: user.password,
    });
  }
  for (const group of groups) {
    await client.add(`cn=${group.cn},ou=groups,${BASE_DN}`, { objectClass: 'groupOfNames', cn: group.cn, member: group.members.map(userDn) });
  }
}

/** Waits for `child` to exit, SIGKILL once STOP_LIMIT_MS have passed. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
  await exited;
  clearTimeout(timer);
}

/**
 * Debian's OpenLDAP slapd (/usr/sbin/slapd), in the foreground, from a temp directory of its own: a CA
 * and a server certificate made by openssl, `ldap://` (StartTLS offered) and `ldaps://` on free ports of
 * 127.0.0.1, the service account, `users` and `groups` added through ldapts once it answers. `acl`: slapd.conf
 * `access` lines of the test's, before the defaults. One per test file; `close()` in `after`.
 */
export async function startSlapd(options: { users?: readonly SlapdUser[]; groups?: readonly SlapdGroup[]; acl?: readonly string[] } = {}): Promise<Slapd> {
  const dir = mkdtempSync(join(tmpdir(), 'cmi-slapd-'));
  const rootPassword = 'root-secret';
  const servicePassword = 'service-secret';
  let child: ChildProcess | undefined;
  let admin: Client | undefined;
  const close = async () => {
    await admin?.unbind().catch(() => undefined);
    admin = undefined;
    if (child !== undefined) await stopProcess(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    mkdirSync(join(dir, 'db'));
    const tls = makeCertificates(dir);
    writeFileSync(join(dir, 'slapd.conf'), slapdConf(dir, tls, rootPassword, options.acl ?? []));
    const [ldapPort, ldapsPort] = [await freePort(), await freePort()];
    const ldapUrl = `ldap://127.0.0.1:${ldapPort}`;
    const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
    // -d 0: the foreground, no debug output; what slapd says on stderr is kept for a failed start.
    // setpriv --pdeathsig: a test process that dies without close() takes its slapd with it.
    const slapd = ['/usr/sbin/slapd', '-d', '0', '-f', join(dir, 'slapd.conf'), '-h', `${ldapUrl}/ ${ldapsUrl}/`];
    child = spawn('/usr/bin/setpriv', ['--pdeathsig', 'SIGTERM', '--', ...slapd], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString('utf8')).slice(-4000); });
    const started = child;
    admin = await adminClient(ldapUrl, rootPassword, started, () => stderr);
    await seed(admin, servicePassword, options.users ?? [], options.groups ?? []);
    const connected = admin;
    return {
      ldapUrl,
      ldapsUrl,
      caCertificate: readFileSync(tls.ca, 'utf8'),
      baseDn: BASE_DN,
      userDn,
      groupDn: (cn) => `cn=${cn},ou=groups,${BASE_DN}`,
      serviceDn: SERVICE_DN,
      servicePassword,
      rootDn: ROOT_DN,
      rootPassword,
      setPassword: (uid, password) => connected.modify(userDn(uid), new Change({ operation: 'replace', modification: new Attribute({ type: 'userPassword', values: [password] }) })),
      removeFromGroup: (cn, uid) => connected.modify(`cn=${cn},ou=groups,${BASE_DN}`, new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [userDn(uid)] }) })),
      removeUser: async (uid) => {
        const { searchEntries } = await connected.search(`ou=groups,${BASE_DN}`, { filter: new EqualityFilter({ attribute: 'member', value: userDn(uid) }), attributes: ['cn'] });
        for (const group of searchEntries) await connected.modify(group.dn, new Change({ operation: 'delete', modification: new Attribute({ type: 'member', values: [userDn(uid)] }) }));
        await connected.del(userDn(uid));
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
