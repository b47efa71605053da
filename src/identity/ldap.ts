import net from 'node:net';
import tls from 'node:tls';
import { Client, type Entry, ResultCodeError } from 'ldapts';
import { type ExternalIdentity, type LdapSettings, ProviderUnavailable } from './external-identity.js';

/**
 * How long a directory may take to accept the connection, and then to answer each operation (StartTLS,
 * a bind, a search), before the sign-in says it is unavailable (docs/sso-ldap.md#failures).
 */
export const LDAP_TIMEOUT_MS = 5000;

const MAX_LOGIN = 255;
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/;
/** LDAP result codes (RFC 4511 appendix A) a sign-in answers as "not this person", not as a directory failure. */
const INVALID_CREDENTIALS = 49;
const NO_SUCH_OBJECT = 32;
const INVALID_DN_SYNTAX = 34;
const INSUFFICIENT_ACCESS = 50;
/** The operational attribute giving an entry's stable id (RFC 4530), asked for explicitly. */
const ENTRY_UUID = 'entryUUID';
const WHO_AM_I_OID = '1.3.6.1.4.1.4203.1.11.3';

const hex = (char: string) => `\\${char.charCodeAt(0).toString(16).padStart(2, '0')}`;

/**
 * `text` as a value in a search filter (RFC 4515 section 3): `*`, `(`, `)`, `\` and NUL as `\2a`, `\28`,
 * `\29`, `\5c`, `\00`, so a login never adds a wildcard or a clause to `user_filter` (docs/sso-ldap.md#what-is-checked).
 */
export function ldapFilterValue(text: string): string {
  // eslint-disable-next-line no-control-regex -- NUL is one of the five RFC 4515 escapes
  return text.replace(/[*()\\\u0000]/g, hex);
}

/**
 * `text` as an attribute value in a DN (RFC 4514 section 2.4): `"`, `+`, `,`, `;`, `<`, `>` and `\` after
 * a backslash, a leading space or `#` and a trailing space too, NUL and the other control characters as
 * `\hh`; so a login fills the DN template's value and nothing else (docs/sso-ldap.md#the-dn-template-form).
 */
export function ldapDnValue(text: string): string {
  const chars = [...text];
  return chars.map((char, index) => {
    if (CONTROL.test(char)) return hex(char);
    if ('"+,;<>\\'.includes(char)) return `\\${char}`;
    if (index === 0 && (char === ' ' || char === '#')) return `\\${char}`;
    if (index === chars.length - 1 && char === ' ') return '\\ ';
    return char;
  }).join('');
}

/** The directory's host as TLS checks it (brackets of an IPv6 address off). */
function hostOf(url: string): string {
  const host = new URL(url).hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/**
 * The TLS options for the directory: its certificate checked against `ca_certificate` alone when set
 * (else the system's CAs) and for its host name (SNI sent for a name, never for an address).
 */
function tlsOptions(settings: LdapSettings): tls.ConnectionOptions {
  const host = hostOf(settings.url);
  return {
    host,
    minVersion: 'TLSv1.2',
    rejectUnauthorized: true,
    ...(net.isIP(host) === 0 ? { servername: host } : {}),
    ...(settings.ca_certificate.trim() === '' ? {} : { ca: [settings.ca_certificate] }),
  };
}

/**
 * `connect`, allowed once: ldapts reconnects by itself when the server closes the connection, and a
 * reconnect after StartTLS would send the next bind's password in the clear. Each sign-in has one
 * connection; a second is refused.
 */
function onlyOnce<F extends (...args: never[]) => net.Socket>(connect: F): F {
  let used = false;
  const guarded = (...args: Parameters<F>): net.Socket => {
    if (!used) {
      used = true;
      return connect(...args);
    }
    const refused = new net.Socket();
    refused.destroy(new Error('the connection closed during the sign-in'));
    return refused;
  };
  return guarded as unknown as F;
}

/** What went wrong, as one line for the sign-in page and the log: the server's or the system's words, never a password. */
function reason(error: unknown): string {
  if (error instanceof ResultCodeError) {
    // "No such object (LDAP result 32)": the server's diagnostic when it gives one, else the result's name.
    const said = error.message.replace(/\s*Code: 0x[0-9a-f]+$/i, '').replace(/\s+/g, ' ').trim();
    const named = error.name.replace(/Error$/, '').replace(/(?<=[a-z])(?=[A-Z])/g, ' ').toLowerCase();
    return `${said === '' ? named.charAt(0).toUpperCase() + named.slice(1) : said} (LDAP result ${error.code})`;
  }
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message.split('\n').at(-1)?.trim() || error.name : String(error);
  return typeof code === 'string' && !message.includes(code) ? `${message} (${code})` : message;
}

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : '';
};
const isTlsFailure = (error: unknown) => /CERT|SSL|TLS|ISSUER|SELF_SIGNED|HOSTNAME|ALTNAME/i.test(codeOf(error));
const isUnreachable = (error: unknown) => /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EPIPE)$/.test(codeOf(error)) || (error instanceof Error && error.message === 'Connection timeout');

/** The `ProviderUnavailable` for `error` during `step` at the directory of `settings`. */
function unavailable(settings: LdapSettings, step: string, error: unknown): ProviderUnavailable {
  if (error instanceof ProviderUnavailable) return error;
  const what = isTlsFailure(error) ? `its TLS certificate was not accepted (${step})` : isUnreachable(error) ? `it could not be reached (${step})` : `${step} failed`;
  return new ProviderUnavailable(`The LDAP directory ${settings.url} is unavailable: ${what}: ${reason(error)}`, { cause: error });
}

/** `work`, which must settle within `ms`: for StartTLS's handshake, which ldapts does not bound. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs one operation on the directory, named for the message should it fail (ProviderUnavailable), bounded in time. */
type Step = <R>(name: string, operation: () => Promise<R>) => Promise<R>;

/**
 * A connection to the directory of `settings` (TLS from the first byte for `ldaps://`, upgraded by
 * StartTLS before anything else when `start_tls` is set), given to `work` and always closed after.
 */
async function withDirectory<T>(settings: LdapSettings, timeoutMs: number, work: (client: Client, step: Step) => Promise<T>): Promise<T> {
  const protocol = URL.canParse(settings.url) ? new URL(settings.url).protocol : '';
  if (protocol !== 'ldap:' && protocol !== 'ldaps:') throw new ProviderUnavailable('The LDAP directory\'s url is not an ldap:// or ldaps:// URL: correct the provider\'s settings');
  const secure = protocol === 'ldaps:';
  const options = tlsOptions(settings);
  const client = new Client({
    url: settings.url,
    connectTimeout: timeoutMs,
    timeout: timeoutMs,
    // Only for ldaps://: ldapts speaks TLS from the first byte whenever tlsOptions is given.
    ...(secure ? { tlsOptions: options } : {}),
    createConnection: onlyOnce(net.connect),
    createSecureConnection: onlyOnce(tls.connect),
  });
  const step = async <R>(name: string, operation: () => Promise<R>): Promise<R> => {
    try {
      return await within(timeoutMs + 1000, operation());
    } catch (error) {
      throw unavailable(settings, name, error);
    }
  };
  try {
    if (!secure && settings.start_tls) await step('StartTLS', () => client.startTLS({ ...options }));
    return await work(client, step);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** Whether `error` is the directory's answer `code` (an LDAP result, not a connection failure). */
const isResult = (error: unknown, ...codes: number[]) => error instanceof ResultCodeError && codes.includes(error.code);

/** The values of `entry`'s attribute `name` (matched case aside, as LDAP names are), as strings. */
function valuesOf(entry: Entry, name: string): string[] {
  const key = Object.keys(entry).find((candidate) => candidate.toLowerCase() === name.toLowerCase() && candidate !== 'dn');
  if (key === undefined) return [];
  const value = entry[key];
  return (Array.isArray(value) ? value : [value]).map((item) => (Buffer.isBuffer(item) ? item.toString('utf8') : String(item)));
}

/** The identity an entry gives: its entryUUID (its DN lowercased on a server without one), `login` as typed. */
function identityOf(entry: Entry, login: string, settings: LdapSettings): ExternalIdentity {
  const first = (name: string) => valuesOf(entry, name)[0] || undefined;
  return {
    subject: first(ENTRY_UUID) ?? entry.dn.toLowerCase(),
    login,
    email: first('mail'),
    groups: valuesOf(entry, settings.group_attribute || 'memberOf'),
    firstName: first('givenName'),
    lastName: first('sn'),
  };
}

const attributesFor = (settings: LdapSettings) => [ENTRY_UUID, 'mail', 'givenName', 'sn', settings.group_attribute || 'memberOf'];

/** The login as cmi sends it to the directory: trimmed; undefined when empty, too long or holding a control character. */
function usableLogin(login: string): string | undefined {
  const trimmed = login.trim();
  return trimmed === '' || [...trimmed].length > MAX_LOGIN || CONTROL.test(trimmed) ? undefined : trimmed;
}

/**
 * Binds as `dn` with `password`: true when the directory accepts it, false when it refuses the
 * credentials (a wrong password, no such entry, a DN it cannot parse), ProviderUnavailable otherwise.
 */
async function userBind(client: Client, step: Step, dn: string, password: string): Promise<boolean> {
  try {
    await step("the user's bind", () => client.bind(dn, password));
    return true;
  } catch (error) {
    if (error instanceof ProviderUnavailable && isResult(error.cause, INVALID_CREDENTIALS, NO_SUCH_OBJECT, INVALID_DN_SYNTAX)) return false;
    throw error;
  }
}

/** Binds as the service account (`bind_dn`): its refusal is the directory's misconfiguration, not the user's. */
async function serviceBind(client: Client, step: Step, settings: LdapSettings): Promise<void> {
  try {
    await step("the service account's bind", () => client.bind(settings.bind_dn, settings.bind_password));
  } catch (error) {
    if (error instanceof ProviderUnavailable && isResult(error.cause, INVALID_CREDENTIALS)) {
      throw new ProviderUnavailable(`The LDAP directory ${settings.url} refused the service account ${settings.bind_dn}: check bind_dn and bind_password`, { cause: error.cause });
    }
    throw error;
  }
}

/**
 * The person `login` and `password` name in the LDAP directory of `settings`
 * (docs/sso-ldap.md#how-a-sign-in-goes): with `bind_dn`, the service account searches `base_dn` for
 * `user_filter` (the login RFC 4515-escaped) and the one entry found is bound with `password`; without,
 * `user_filter` is the DN (the login RFC 4514-escaped) bound with `password`, whose entry is then read
 * as itself. Undefined for a wrong password, no entry or several alike (nobody learns which), and,
 * without a word to the directory, for an empty password (an unauthenticated bind many servers accept)
 * or a login that is empty, longer than 255 or holds a control character. ProviderUnavailable when the
 * directory cannot be reached, in time, over TLS checked, or refuses the service account.
 */
export async function ldapAuthenticate(settings: LdapSettings, login: string, password: string, timeoutMs = LDAP_TIMEOUT_MS): Promise<ExternalIdentity | undefined> {
  const typed = usableLogin(login);
  if (typed === undefined || password === '' || password.includes('\u0000')) return undefined;
  return withDirectory(settings, timeoutMs, async (client, step) => {
    if (settings.bind_dn !== '') {
      await serviceBind(client, step, settings);
      const filter = settings.user_filter.replaceAll('{login}', () => ldapFilterValue(typed));
      const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
      const { searchEntries } = await step('the search for the user', () => client.search(settings.base_dn, { scope: 'sub', filter, sizeLimit: 2, timeLimit: seconds, attributes: attributesFor(settings) }));
      const entry = searchEntries.length === 1 ? searchEntries[0] : undefined;
      if (entry === undefined || !(await userBind(client, step, entry.dn, password))) return undefined;
      return identityOf(entry, typed, settings);
    }
    const dn = settings.user_filter.replaceAll('{login}', () => ldapDnValue(typed));
    if (!(await userBind(client, step, dn, password))) return undefined;
    // Bound, yet its entry unreadable: its subject would not be its entryUUID, so no identity at all.
    const unreadable = () => new ProviderUnavailable(`The LDAP directory ${settings.url} let ${dn} bind but not read its own entry: let it read its entryUUID, mail, givenName, sn and ${settings.group_attribute}`);
    let entries: Entry[];
    try {
      ({ searchEntries: entries } = await step('reading the entry bound', () => client.search(dn, { scope: 'base', filter: '(objectClass=*)', attributes: attributesFor(settings) })));
    } catch (error) {
      if (error instanceof ProviderUnavailable && isResult(error.cause, NO_SUCH_OBJECT, INSUFFICIENT_ACCESS)) throw unreadable();
      throw error;
    }
    const entry = entries[0];
    if (entry === undefined) throw unreadable();
    return identityOf(entry, typed, settings);
  });
}

/**
 * Whether the directory of `settings` answers as a sign-in needs (docs/sso-ldap.md#what-is-checked): the
 * connection (and StartTLS), then, with `bind_dn`, the service account's bind and `base_dn` read; without,
 * any answer of the server to a Who am I? (RFC 4532). ProviderUnavailable saying what failed, else nothing.
 */
export async function ldapCheck(settings: LdapSettings, timeoutMs = LDAP_TIMEOUT_MS): Promise<void> {
  await withDirectory(settings, timeoutMs, async (client, step) => {
    if (settings.bind_dn !== '') {
      await serviceBind(client, step, settings);
      await step(`reading base_dn ${settings.base_dn}`, () => client.search(settings.base_dn, { scope: 'base', filter: '(objectClass=*)', attributes: ['1.1'] }));
      return;
    }
    try {
      await step('the first exchange', () => client.exop(WHO_AM_I_OID));
    } catch (error) {
      // The server answered (even "unwilling"): it is there, and TLS held.
      if (error instanceof ProviderUnavailable && error.cause instanceof ResultCodeError) return;
      throw error;
    }
  });
}
