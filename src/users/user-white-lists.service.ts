import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted, assertPermittedOnUser } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { MAX_RANGE_LENGTH, parseIpRange } from '../shared/ip-ranges.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, Forbidden, FORBIDDEN_MESSAGE, NotFound, Unprocessable } from '../shared/problems.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import type { User } from './user.js';
import type { UserWhiteList, UserWhiteListsRepository } from './user-white-lists.store.js';

/** Limits on a user's allowed addresses (docs/limits.md). */
export const whiteListLimits = {
  /** Entries one user may have. */
  perUser: 100,
  /** Longest description. */
  description: 255,
} as const;

/** What the service reads of the users. */
export interface WhiteListUsers {
  findById(id: number): Promise<User | undefined>;
}

/**
 * `fields.ip` read as an address or CIDR range, in its normal form; an error on `ip` otherwise
 * (docs/security.md#allowed-addresses). With `required`, it must be there.
 */
function readIp(fields: Record<string, unknown>, errors: FieldErrors, required: boolean): string | undefined {
  const text = stringField(fields, 'ip', errors, { required, max: MAX_RANGE_LENGTH });
  if (text === undefined) return undefined;
  const range = parseIpRange(text.trim());
  if (range === undefined) {
    errors.add('ip', 'must be an IPv4 or IPv6 address or CIDR range (such as 192.0.2.10, 192.0.2.0/24, 2001:db8::/32)');
    return undefined;
  }
  return range.text;
}

const readDescription = (fields: Record<string, unknown>, errors: FieldErrors) =>
  stringField(fields, 'description', errors, { required: false, max: whiteListLimits.description });

/**
 * A user's allowed addresses, OnApp's `user_white_lists` (docs/security.md#allowed-addresses). Who
 * may: the list is read with users.read (users.read.own for one's own); it is changed with
 * users.update on any user (not users.update.own: a user must not widen the list an administrator
 * set on it), and only for a user who holds no permission the actor lacks (an actor cannot decide
 * from where a stronger account is used). Every change is audited, and moves the credentials
 * version (migration 035), so every process applies it from the next request on.
 */
export function userWhiteListsService(
  lists: UserWhiteListsRepository,
  users: WhiteListUsers,
  clock: Clock,
  audit: AuditRecorder,
  /** Drops the user's verifications in this process (other processes hear of it from the credentials version). */
  credentialsChanged: (userId: number) => void,
) {
  async function readable(actor: Actor, userId: number): Promise<void> {
    assertPermittedOnUser(actor, 'users.read', userId);
    if (!(await users.findById(userId))) throw new NotFound();
  }

  async function changeable(actor: Actor, userId: number): Promise<void> {
    assertPermitted(actor, 'users.update');
    const user = await users.findById(userId);
    if (!user) throw new NotFound();
    const lacking = [...user.permissions].filter((permission) => !actor.permissions.has(permission) && !(permission.endsWith('.own') && actor.permissions.has(permission.slice(0, -'.own'.length)))).sort();
    if (lacking.length > 0) throw new Forbidden(`${FORBIDDEN_MESSAGE} (needs ${lacking.join(', ')}: user ${user.id}'s allowed addresses guard its permissions)`);
  }

  const record = (actor: Actor, action: string, userId: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'user', target_id: userId, changes });

  const refused = (outcome: 'duplicate' | 'limit') =>
    outcome === 'duplicate' ? new Unprocessable({ ip: ['has already been taken'] }) : new Unprocessable({ base: [`A user has at most ${whiteListLimits.perUser} allowed addresses: remove one first`] });

  return {
    async list(actor: Actor, userId: number, limit: number, offset: number): Promise<Page<UserWhiteList>> {
      await readable(actor, userId);
      const [items, total] = await Promise.all([lists.page(userId, limit, offset), lists.count(userId)]);
      return { items, total };
    },

    async get(actor: Actor, userId: number, id: number): Promise<UserWhiteList> {
      await readable(actor, userId);
      const entry = await lists.find(userId, id);
      if (!entry) throw new NotFound();
      return entry;
    },

    /** `{"user_white_list": {"ip": ..., "description": ...}}` or the bare fields; `ip` required. */
    async create(actor: Actor, userId: number, body: unknown): Promise<UserWhiteList> {
      await changeable(actor, userId);
      const fields = unwrapRecord(body ?? {}, 'user_white_list');
      const errors = new FieldErrors();
      const ip = readIp(fields, errors, true);
      const description = readDescription(fields, errors) ?? '';
      errors.throwIfAny();
      const added = await lists.add(userId, ip as string, description, whiteListLimits.perUser, clock());
      if (added === 'no_user' || added === 'not_found') throw new NotFound();
      if (added === 'duplicate' || added === 'limit') throw refused(added);
      credentialsChanged(userId);
      await record(actor, 'user.white_list.create', userId, { white_list_id: added.id, ip: added.ip, description: added.description });
      return added;
    },

    /** The fields given (the Go SDK sends them bare, the PHP wrapper under `user_white_list`). */
    async update(actor: Actor, userId: number, id: number, body: unknown): Promise<UserWhiteList> {
      await changeable(actor, userId);
      const fields = unwrapRecord(body ?? {}, 'user_white_list');
      const errors = new FieldErrors();
      const ip = readIp(fields, errors, false);
      const description = readDescription(fields, errors);
      errors.throwIfAny();
      const outcome = await lists.update(userId, id, { ...(ip === undefined ? {} : { ip }), ...(description === undefined ? {} : { description }) }, clock());
      if (outcome === 'no_user' || outcome === 'not_found') throw new NotFound();
      if (outcome === 'duplicate' || outcome === 'limit') throw refused(outcome);
      credentialsChanged(userId);
      const { before, after } = outcome;
      const changes: Record<string, unknown> = { white_list_id: id };
      if (before.ip !== after.ip) changes.ip = [before.ip, after.ip];
      if (before.description !== after.description) changes.description = [before.description, after.description];
      await record(actor, 'user.white_list.update', userId, changes);
      return after;
    },

    async remove(actor: Actor, userId: number, id: number): Promise<void> {
      await changeable(actor, userId);
      const removed = await lists.remove(userId, id);
      if (!removed) throw new NotFound();
      credentialsChanged(userId);
      await record(actor, 'user.white_list.delete', userId, { white_list_id: id, ip: removed.ip });
    },
  };
}

export type UserWhiteListsService = ReturnType<typeof userWhiteListsService>;
