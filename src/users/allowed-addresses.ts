import { isIP } from 'node:net';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Credential } from '../audit/audit-event.js';
import { addressInList, ipRangeList, type IpRange, type IpRangeList, parseIpRange } from '../shared/ip-ranges.js';
import { Forbidden } from '../shared/problems.js';
import type { User } from './user.js';
import type { UserWhiteListsRepository } from './user-white-lists.store.js';

/**
 * A user's allowed addresses as authentication checks them (docs/security.md#allowed-addresses): a
 * BlockList of its `user_white_lists`, built once when its credential is verified and kept with that
 * verification in the verification cache (users/verification-cache.ts Verified.allowedFrom), so a
 * request answered from the cache asks only the BlockList. Undefined: no list, any address will do.
 * A change to a list moves the credentials version (migration 035), which drops the verifications
 * holding the old one, in every process.
 */
export type AllowedFrom = IpRangeList | undefined;

/** What the authenticator asks for each verification it makes against the database. */
export type AllowedAddressesOf = (userId: number) => Promise<AllowedFrom>;

/** The lists from the store: nothing built for a user without one. */
export function allowedAddressesOf(lists: Pick<UserWhiteListsRepository, 'rangesOf'>): AllowedAddressesOf {
  return async (userId) => {
    const texts = await lists.rangesOf(userId);
    if (texts.length === 0) return undefined;
    // Stored in normal form (the service wrote it so); a row that no longer reads (edited by hand)
    // allows nothing rather than everything.
    const ranges = texts.map(parseIpRange).filter((range): range is IpRange => range !== undefined);
    return ipRangeList(ranges);
  };
}

/** Whether `address` may use an account whose allowed addresses are `allowed`. */
export const isAllowedFrom = (allowed: AllowedFrom, address: string): boolean => allowed === undefined || addressInList(allowed, address);

/**
 * The 403 of a user refused at an address its list does not hold: it names the reason and the
 * address (only when it is one: behind a proxy, X-Forwarded-For is whatever was written there).
 */
export function notAnAllowedAddress(address: string): Forbidden {
  const shown = isIP(address) === 0 ? 'this address' : address;
  return new Forbidden(`This account may be used only from its allowed addresses (user_white_lists); ${shown} is not one of them`);
}

/**
 * Refuses `user` at `address` unless its list allows it there: the refusal is audited as
 * `user.access_refused` (the credential it came with, the address), then thrown.
 */
export async function refuseUnlessAllowed(
  audit: AuditRecorder,
  user: User,
  allowed: AllowedFrom,
  address: string,
  credential: Credential,
  requestId?: string,
): Promise<void> {
  if (isAllowedFrom(allowed, address)) return;
  await audit.record(
    { id: user.id, login: user.login, credential, address, ...(requestId === undefined ? {} : { requestId }) },
    { action: 'user.access_refused', target_type: 'user', target_id: user.id, changes: { reason: 'not an allowed address' } },
  );
  throw notAnAllowedAddress(address);
}
