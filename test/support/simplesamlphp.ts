import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';

// A real SAML 2.0 identity provider for the tests: Debian's simplesamlphp package (1.19) served by
// `php -S`, configured entirely here in a temporary directory (SIMPLESAMLPHP_CONFIG_DIR), never the
// system's /etc/simplesamlphp. It needs PHP's dom and xml extensions (Debian's php-xml).

const run = promisify(execFile);
const WWW = '/usr/share/simplesamlphp/www';
const STARTUP_MS = 15_000;

const NAME_ID_FORMATS = {
  persistent: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
  email: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
  transient: 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient',
} as const;

/** A person the identity provider knows: its password and the attributes its assertions carry (each a list of values). */
export interface SimpleSamlPhpUser {
  login: string;
  password: string;
  attributes: Record<string, string[]>;
}

/** A service provider the identity provider serves (its saml20-sp-remote entry). */
export interface SimpleSamlPhpServiceProvider {
  entityId: string;
  /** Its AssertionConsumerService URLs (HTTP-POST): the first is the default one. */
  acsUrls: string[];
  /**
   * The NameID formats the identity provider can give it (default persistent and email, as the request
   * asks): persistent is a hash of `uid` per service provider (saml:PersistentNameID), email is `mail`
   * (saml:AttributeNameID). `['transient']` gives only transient NameIDs, whatever is asked.
   */
  nameIdFormats?: (keyof typeof NAME_ID_FORMATS)[];
  /** Seconds its assertions are valid (SimpleSAMLphp's assertion.lifetime, default 300); negative: expired when made. */
  assertionLifetime?: number;
}

export interface SimpleSamlPhpOptions {
  users: SimpleSamlPhpUser[];
  serviceProviders: SimpleSamlPhpServiceProvider[];
}

export interface SimpleSamlPhp {
  /** Its IdP metadata URL, which is also its entity id. */
  metadataUrl: string;
  /** Its metadata as it served it at start. */
  metadataXml: string;
  /** Its origin, `http://127.0.0.1:<port>`. */
  origin: string;
  /** The persistent NameID it gives the user with `uid` at the service provider `spEntityId` (saml:PersistentNameID's hash, with this instance's secret salt). */
  persistentNameId(uid: string, spEntityId: string): string;
  close(): Promise<void>;
}

/** A PHP literal of `value` (strings single-quoted, so nothing in them is interpolated). */
function php(value: unknown): string {
  if (typeof value === 'string') return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map(php).join(', ')}]`;
  return `[${Object.entries(value as Record<string, unknown>).map(([key, item]) => `${php(key)} => ${php(item)}`).join(', ')}]`;
}

/** A port free on 127.0.0.1 a moment ago (php -S takes no port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The authentication processing filters giving a service provider the NameIDs it may have. */
function nameIdFilters(formats: (keyof typeof NAME_ID_FORMATS)[]): Record<number, unknown> {
  const filters: Record<number, unknown> = {};
  if (formats.includes('persistent')) filters[10] = { class: 'saml:PersistentNameID', attribute: 'uid', nameId: true };
  if (formats.includes('email')) filters[11] = { class: 'saml:AttributeNameID', Format: NAME_ID_FORMATS.email, attribute: 'mail' };
  return filters;
}

async function writeConfiguration(dir: string, origin: string, salt: string, options: SimpleSamlPhpOptions): Promise<void> {
  for (const sub of ['config', 'cert', 'metadata', 'log', 'data', 'tmp', 'cache', 'sessions']) await mkdir(join(dir, sub));
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-sha256', '-days', '2', '-subj', '/CN=simplesamlphp-test-idp',
    '-keyout', join(dir, 'cert', 'idp.key'), '-out', join(dir, 'cert', 'idp.crt')]);
  const config = {
    baseurlpath: `${origin}/`,
    certdir: join(dir, 'cert') + '/',
    loggingdir: join(dir, 'log') + '/',
    datadir: join(dir, 'data') + '/',
    tempdir: join(dir, 'tmp'),
    cachedir: join(dir, 'cache'),
    metadatadir: join(dir, 'metadata') + '/',
    'metadata.sources': [{ type: 'flatfile', directory: join(dir, 'metadata') }],
    secretsalt: salt,
    'auth.adminpassword': randomBytes(16).toString('hex'),
    technicalcontact_name: 'cmi tests',
    technicalcontact_email: 'tests@example.org',
    timezone: 'UTC',
    'enable.saml20-idp': true,
    'module.enable': { exampleauth: true, core: true, saml: true, admin: true },
    'admin.checkforupdates': false,
    'admin.protectmetadata': false,
    'trusted.url.domains': [new URL(origin).host],
    'logging.handler': 'file',
    'logging.logfile': 'simplesamlphp.log',
    'logging.level': 4,
    'store.type': 'phpsession',
    'session.cookie.secure': false,
    'session.cookie.samesite': 'Lax',
    'session.phpsession.savepath': join(dir, 'sessions'),
    'language.available': ['en'],
    'language.default': 'en',
    showerrors: true,
    errorreporting: false,
  };
  await writeFile(join(dir, 'config', 'config.php'), `<?php\n$config = ${php(config)};\n`);
  const users: Record<string, unknown> = {};
  for (const user of options.users) users[`${user.login}:${user.password}`] = user.attributes;
  // exampleauth:UserPass takes its users as the source's own entries, after its class.
  const authsources = { admin: ['core:AdminPassword'], users: { 0: 'exampleauth:UserPass', ...users } };
  await writeFile(join(dir, 'config', 'authsources.php'), `<?php\n$config = ${php(authsources)};\n`);
  const hosted = {
    host: '__DEFAULT__',
    privatekey: 'idp.key',
    certificate: 'idp.crt',
    auth: 'users',
    'userid.attribute': 'uid',
    'saml20.sign.assertion': true,
    'saml20.sign.response': false,
    'signature.algorithm': 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
    'attributes.NameFormat': 'urn:oasis:names:tc:SAML:2.0:attrname-format:basic',
  };
  await writeFile(join(dir, 'metadata', 'saml20-idp-hosted.php'), `<?php\n$metadata['__DYNAMIC:1__'] = ${php(hosted)};\n`);
  const remote = options.serviceProviders.map((sp) => {
    const formats = sp.nameIdFormats ?? ['persistent', 'email'];
    const entry = {
      AssertionConsumerService: sp.acsUrls.map((url, index) => ({ Binding: 'urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST', Location: url, index })),
      NameIDFormat: NAME_ID_FORMATS[formats[0] ?? 'persistent'],
      authproc: nameIdFilters(formats),
      ...(sp.assertionLifetime !== undefined ? { 'assertion.lifetime': sp.assertionLifetime } : {}),
    };
    return `$metadata[${php(sp.entityId)}] = ${php(entry)};\n`;
  });
  await writeFile(join(dir, 'metadata', 'saml20-sp-remote.php'), `<?php\n${remote.join('')}`);
}

/** Resolves once `url` answers 200 (its body), or throws with the server's output past `STARTUP_MS`. */
async function ready(url: string, child: ChildProcess, output: () => string): Promise<string> {
  const deadline = Date.now() + STARTUP_MS;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`php -S ended (${child.exitCode}) before SimpleSAMLphp answered: ${output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      const body = await response.text();
      if (response.status === 200) return body;
      last = `${response.status}: ${body.slice(0, 2000)}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`SimpleSAMLphp did not answer ${url} within ${STARTUP_MS} ms (last: ${last}); php said: ${output()}`);
}

/**
 * Starts SimpleSAMLphp as a SAML 2.0 IdP on a free port of 127.0.0.1, with its own signing key and
 * certificate (openssl), the users given (an exampleauth:UserPass source) and the service providers
 * given; resolves once its metadata is served. Assertions are signed (the response around them is not).
 */
export async function startSimpleSamlPhp(options: SimpleSamlPhpOptions): Promise<SimpleSamlPhp> {
  // The port was free a moment before php took it: another process may have taken it in between.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test(String(error))) throw error;
    }
  }
}

async function startOnce(options: SimpleSamlPhpOptions): Promise<SimpleSamlPhp> {
  const dir = await mkdtemp(join(tmpdir(), 'cmi-simplesamlphp-'));
  try {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const salt = randomBytes(16).toString('hex');
    await writeConfiguration(dir, origin, salt, options);
    let output = '';
    const child = spawn('php', ['-S', `127.0.0.1:${port}`, '-t', WWW], {
      cwd: dir,
      env: { ...process.env, SIMPLESAMLPHP_CONFIG_DIR: join(dir, 'config') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const close = async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
      await rm(dir, { recursive: true, force: true });
    };
    const metadataUrl = `${origin}/saml2/idp/metadata.php`;
    try {
      const metadataXml = await ready(metadataUrl, child, () => output);
      const part = (text: string) => `${Buffer.byteLength(text)}:${text}`;
      const persistentNameId = (uid: string, spEntityId: string) => createHash('sha1').update(`uidhashbase${salt}${part(metadataUrl)}${part(spEntityId)}${part(uid)}${salt}`).digest('hex');
      return { metadataUrl, metadataXml, origin, persistentNameId, close };
    } catch (error) {
      const log = await readFile(join(dir, 'log', 'simplesamlphp.log'), 'utf8').catch(() => '');
      await close();
      throw new Error(`${(error as Error).message}\nSimpleSAMLphp's log: ${log.slice(-2000)}`, { cause: error });
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Fills SimpleSAMLphp's login form on `page` (which shows it, or is about to) and submits it; resolves
 * once the browser has left SimpleSAMLphp (its auto-posted form sends the response to the service
 * provider's ACS). SimpleSAMLphp keeps a session by cookie: a second sign-in in the same browser
 * context shows no login form (use a new context for each person).
 */
export async function signInAtSimpleSamlPhp(page: Page, login: string, password: string): Promise<void> {
  await page.locator('input[name="username"]').waitFor({ timeout: 10_000 });
  const idp = new URL(page.url()).origin;
  await page.locator('input[name="username"]').fill(login);
  await page.locator('input[name="password"]').fill(password);
  const left = page.waitForURL((url) => url.origin !== idp, { waitUntil: 'commit', timeout: 10_000 });
  await page.locator('#submit_button').click();
  await left.catch(async (error: unknown) => {
    throw new Error(`SimpleSAMLphp kept the browser on ${new URL(page.url()).pathname} after ${login}'s sign-in: ${(await page.locator('body').innerText()).slice(0, 500)}`, { cause: error });
  });
}
