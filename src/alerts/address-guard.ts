import { BlockList, isIP } from 'node:net';
import { type LookupAddress, lookup as dnsLookup } from 'node:dns';

/**
 * Which internal hosts alert destinations may reach (docs/alert-routing.md#internal-addresses):
 * CMI_ALERT_ALLOWED_HOSTS, host names (compared as a URL writes them, lower-case) and addresses or
 * CIDR ranges. Empty: none.
 */
export interface AllowedHosts {
  names: ReadonlySet<string>;
  ranges: BlockList;
  /** The setting as given, for a message. */
  text: string;
}

export const NO_ALLOWED_HOSTS: AllowedHosts = { names: new Set(), ranges: new BlockList(), text: '' };

/**
 * The addresses a destination is refused at: loopback, "this network" and unspecified, private
 * (RFC 1918, shared 100.64/10), link-local, unique-local and site-local, benchmarking, multicast and
 * reserved, in IPv4 and IPv6. An IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is
 * judged by that IPv4 address (`embeddedIPv4`).
 */
const INTERNAL = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) INTERNAL.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // ::/96 holds the unspecified address, loopback and the deprecated IPv4-compatible addresses.
  ['::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) INTERNAL.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (`isIP(text) === 6`, no zone). */
function groupsOf(text: string): number[] {
  let address = text;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    address = `${address.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = address.includes('::') ? address.split('::') as [string, string] : [address, undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** The IPv4 address an IPv6 one carries, if it is mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::/96) or 6to4 (2002::/16). */
function embeddedIPv4(groups: number[]): string | undefined {
  const quad = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((group) => group === 0)) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!);
  return undefined;
}

/** `address` without an IPv6 zone (`fe80::1%eth0`) or brackets. */
const bare = (address: string) => address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');

/** Whether `address` (an IP address) is one that CMI_ALERT_ALLOWED_HOSTS lists. */
function allowedAddress(address: string, allowed: AllowedHosts): boolean {
  const ip = bare(address);
  const family = isIP(ip);
  if (family === 4) return allowed.ranges.check(ip, 'ipv4');
  if (family !== 6) return false;
  const v4 = embeddedIPv4(groupsOf(ip.toLowerCase()));
  return allowed.ranges.check(ip, 'ipv6') || (v4 !== undefined && allowed.ranges.check(v4, 'ipv4'));
}

/** Whether `address` (an IP address, v4 or v6) is internal: loopback, private, link-local, unique-local, unspecified and the like. */
export function isInternalAddress(address: string): boolean {
  const ip = bare(address);
  const family = isIP(ip);
  if (family === 4) return INTERNAL.check(ip, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIPv4(groupsOf(ip.toLowerCase()));
  return v4 !== undefined ? INTERNAL.check(v4, 'ipv4') : INTERNAL.check(ip, 'ipv6');
}

/** Whether a destination may be sent to `address` (an IP address it resolved to, or is). */
export const addressAllowed = (address: string, allowed: AllowedHosts): boolean => !isInternalAddress(address) || allowedAddress(address, allowed);

/**
 * `host` as the WHATWG URL parser writes an http URL's host: lower-case, an IPv4 address in any of
 * its spellings (`127.1`, `2130706433`, `0x7f.1`) dotted, IPv6 compressed, brackets and a final dot
 * dropped. undefined when it is no host.
 */
export function normalisedHost(host: string): string | undefined {
  try {
    const hostname = new URL(`http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}/`).hostname;
    return bare(hostname).replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** What the deliveries list shows for a destination refused at its address: fixed words, never the address. */
export const INTERNAL_REFUSAL = 'not sent: the destination is an internal address (loopback, private or link-local); CMI_ALERT_ALLOWED_HOSTS allows such hosts';

/** The error a refused connection fails with: `code` is what a delivery's reason shows. */
export class InternalAddressError extends Error {
  readonly code = INTERNAL_REFUSAL;
  constructor() {
    super(INTERNAL_REFUSAL);
  }
}

/**
 * What is known of `host` (a destination's URL host or SMTP host) before it is resolved: `refused`
 * (an internal address not allowed), `allowed` (CMI_ALERT_ALLOWED_HOSTS names it or holds its
 * address), `address` (a public address: sent to as it is), or `resolve` (a name, `localhost` too,
 * whose addresses are checked when it is resolved).
 */
export function hostVerdict(host: string, allowed: AllowedHosts): 'refused' | 'allowed' | 'address' | 'resolve' {
  const name = normalisedHost(host);
  if (name === undefined) return 'refused';
  if (allowed.names.has(name)) return 'allowed';
  if (isIP(name) !== 0) return addressAllowed(name, allowed) ? (isInternalAddress(name) ? 'allowed' : 'address') : 'refused';
  return 'resolve';
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for node:net, node:http and node:tls that resolves once and fails with
 * InternalAddressError when any address the name resolves to is internal and not allowed: the
 * connection is made to the very address checked (no second resolution a rebinding DNS could answer
 * otherwise). Names CMI_ALERT_ALLOWED_HOSTS lists are resolved unchecked.
 */
export function guardedLookup(allowed: AllowedHosts) {
  return (hostname: string, options: { family?: number | string; all?: boolean; hints?: number } | undefined, callback: LookupCallback): void => {
    const { family, hints } = options ?? {};
    dnsLookup(hostname, { family: family === 'IPv4' ? 4 : family === 'IPv6' ? 6 : (family as number | undefined) ?? 0, hints, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const trusted = allowed.names.has(normalisedHost(hostname) ?? hostname);
      if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (!trusted && addresses.some((entry) => !addressAllowed(entry.address, allowed))) return callback(new InternalAddressError(), []);
      if (options?.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/**
 * The address to connect to for `host` (its first IPv4 address, else its first), resolved once and
 * checked (see guardedLookup), or the
 * InternalAddressError or DNS error it failed with; a name not resolved within `timeoutMs` is an
 * ETIMEOUT error.
 */
export function checkedAddress(host: string, allowed: AllowedHosts, timeoutMs: number): Promise<string> {
  const name = normalisedHost(host) ?? host;
  if (isIP(name) !== 0) return addressAllowed(name, allowed) || allowed.names.has(name) ? Promise.resolve(name) : Promise.reject(new InternalAddressError());
  if (hostVerdict(name, allowed) === 'refused') return Promise.reject(new InternalAddressError());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(`no address for ${name} within ${timeoutMs} ms`), { code: 'ETIMEOUT' })), timeoutMs);
    guardedLookup(allowed)(name, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) return reject(error);
      // IPv4 first: a server that listens on one family most often listens on that one.
      const all = addresses as LookupAddress[];
      resolve((all.find((entry) => entry.family === 4) ?? all[0]!).address);
    });
  });
}

/**
 * CMI_ALERT_ALLOWED_HOSTS read: entries separated by commas or spaces, each a host name, an IP
 * address or a CIDR range (`10.0.0.0/8`, `fd00::/8`). A bad entry is answered as `{ bad }`.
 */
export function readAllowedHosts(text: string): AllowedHosts | { bad: string } {
  const names = new Set<string>();
  const ranges = new BlockList();
  for (const entry of text.split(/[\s,]+/).filter((part) => part !== '')) {
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    const address = cidr ? bare(cidr[1]!) : normalisedHost(entry) ?? entry;
    const family = isIP(address);
    if (family !== 0) {
      const prefix = cidr ? Number(cidr[2]) : family === 4 ? 32 : 128;
      if (prefix > (family === 4 ? 32 : 128)) return { bad: entry };
      ranges.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    if (cidr || !/^[a-z0-9._-]{1,253}$/.test(address)) return { bad: entry };
    names.add(address);
  }
  return { names, ranges, text };
}
