import { BlockList, isIP } from 'node:net';

/**
 * IP addresses and CIDR ranges as cmi takes them (a user's allowed addresses, docs/security.md#allowed-addresses;
 * CMI_TRUSTED_PROXIES, docs/operations.md#behind-a-proxy): one text, IPv4 or IPv6, read strictly and
 * written back in one normal form, so the same range is always the same text.
 */
export interface IpRange {
  family: 'ipv4' | 'ipv6';
  /** The range's first address, in its normal form (IPv6 lower-case and compressed, per RFC 5952). */
  network: string;
  prefix: number;
  /** `network`, or `network/prefix` when the range is more than one address: what is stored and shown. */
  text: string;
}

/** Longest text read as an address or range: the longest IPv6 address with an IPv4 tail and a prefix. */
export const MAX_RANGE_LENGTH = 49;

const V4_MAPPED = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

/** The 128 bits of an IPv6 address (isIP 6, no zone), or the 32 of an IPv4 one, as a bigint. */
function bitsOf(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split('.').reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = groups(head);
  const back = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return all.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/** The normal text of `bits` as an address of `family`: dotted quad, or RFC 5952 IPv6 (the longest run of zero groups as `::`). */
function textOf(bits: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((bits >> shift) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_, i) => Number((bits >> BigInt(112 - 16 * i)) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > bestLength) [bestStart, bestLength] = [i, j - i];
    i = j;
  }
  const hex = (part: number[]) => part.map((group) => group.toString(16)).join(':');
  if (bestStart === -1) return hex(groups);
  return `${hex(groups.slice(0, bestStart))}::${hex(groups.slice(bestStart + bestLength))}`;
}

/**
 * `text` read as one address (`10.0.0.5`, `2001:db8::1`) or CIDR range (`10.0.0.0/8`, `2001:db8::/32`);
 * undefined when it is neither. Host bits of a range are cleared (`10.1.2.3/8` is `10.0.0.0/8`); an
 * IPv4-mapped IPv6 address or range (`::ffff:10.0.0.5`, `::ffff:10.0.0.0/104`) is its IPv4 one, since
 * that is the address such a peer is checked as. No zones (`%eth0`), no brackets, no leading zeros in
 * an IPv4 part (`010.0.0.1` is octal to some readers), no prefix with a sign or leading zero.
 */
export function parseIpRange(text: string): IpRange | undefined {
  if (text.length === 0 || text.length > MAX_RANGE_LENGTH) return undefined;
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const prefixText = slash === -1 ? undefined : text.slice(slash + 1);
  const family = isIP(address);
  if ((family !== 4 && family !== 6) || address.includes('%')) return undefined;
  if (family === 4 && address.split('.').some((part) => part.length > 1 && part.startsWith('0'))) return undefined;
  const width = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return undefined;
  let prefix = prefixText === undefined ? width : Number(prefixText);
  if (prefix > width) return undefined;
  let bits = bitsOf(address, family);
  let resultFamily: 4 | 6 = family;
  const mapped = family === 6 && (bits >> 32n) === 0xffffn;
  if (mapped && prefix >= 96) {
    bits &= 0xffffffffn;
    prefix -= 96;
    resultFamily = 4;
  }
  const resultWidth = resultFamily === 4 ? 32n : 128n;
  const mask = ((1n << resultWidth) - 1n) ^ ((1n << (resultWidth - BigInt(prefix))) - 1n);
  const network = textOf(bits & mask, resultFamily);
  const full = prefix === Number(resultWidth);
  return { family: resultFamily === 4 ? 'ipv4' : 'ipv6', network, prefix, text: full ? network : `${network}/${prefix}` };
}

/**
 * BlockLists (node:net) of `ranges`, one a family, built once and asked on every request
 * (addressInList). Apart because a BlockList answers an IPv4 address from an IPv6 range that covers
 * `::ffff:0:0/96` (`::/0` would let every IPv4 client in): an IPv4 address is asked of IPv4 ranges only.
 */
export interface IpRangeList {
  ipv4: BlockList;
  ipv6: BlockList;
}

export function ipRangeList(ranges: readonly IpRange[]): IpRangeList {
  const lists: IpRangeList = { ipv4: new BlockList(), ipv6: new BlockList() };
  for (const range of ranges) lists[range.family].addSubnet(range.network, range.prefix, range.family);
  return lists;
}

/**
 * Whether `address` (a peer's address as the socket or a trusted proxy gave it) is in `list`; an
 * IPv4-mapped IPv6 address (`::ffff:10.0.0.5`, what a dual-stack socket reports for an IPv4 peer) is
 * checked as its IPv4 address. Anything that is not an address is not in any list.
 */
export function addressInList(list: IpRangeList, address: string): boolean {
  const family = isIP(address);
  if (family === 4) return list.ipv4.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = V4_MAPPED.exec(address);
  if (mapped) return list.ipv4.check(mapped[1] as string, 'ipv4');
  return list.ipv6.check(address, 'ipv6');
}
