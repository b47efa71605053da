import type { AuditActor } from '../audit/audit-event.js';
import { Forbidden } from '../shared/problems.js';
import { ALL_PERMISSIONS, type Permission } from './permissions.js';

/**
 * Who acts: a user through the API (its record will do: it carries the permissions of its roles), or
 * the operator at the command line. Every service decides by permission
 * (docs/security.md#authorisation-by-permission).
 */
export interface Actor extends AuditActor {
  id: number | null;
  /** The union of the permissions of the actor's roles. */
  permissions: ReadonlySet<string>;
  /** The client's address, where a password it proves is counted as a guess (docs/security.md#brute-force). */
  address?: string;
  /**
   * Whether it acts through a session cookie, which a thief may hold alone: changing a login, email or
   * password, or making an API key, then needs the actor's current password (docs/security.md#self-service).
   */
  viaSession?: boolean;
  /** Through a session: when it signed in (Unix seconds), which stands for a proof of the password an account without one cannot give. */
  signedInAt?: number;
}

/**
 * The operator at the command line, who holds every permission; the audit trail records it as
 * `system` with the credential `local` (docs/security.md#the-audit-trail).
 */
export const OPERATOR: Actor = { id: null, permissions: ALL_PERMISSIONS, login: 'system', credential: 'local' };

/** cmi itself at start-up (the first administrator): recorded as `system` with the credential `system`. */
export const SYSTEM: Actor = { ...OPERATOR, credential: 'system' };

export const may = (actor: Actor, permission: Permission): boolean => actor.permissions.has(permission);

/** 403 naming `permission` unless the actor holds it. */
export function assertPermitted(actor: Actor, permission: Permission): void {
  if (!may(actor, permission)) throw Forbidden.needs(permission);
}

/**
 * Whether the actor may do `action` to user `userId`: with `<action>` to any user, with `<action>.own`
 * to itself only.
 */
export const mayOnUser = (actor: Actor, action: 'users.read' | 'users.update' | 'users.api_key', userId: number): boolean =>
  may(actor, action) || (actor.id === userId && may(actor, `${action}.own`));

/**
 * 403 unless mayOnUser (for any other id, existing or not), naming what would do: `<action>` for
 * another user, `<action>` or `<action>.own` for oneself.
 */
export function assertPermittedOnUser(actor: Actor, action: 'users.read' | 'users.update' | 'users.api_key', userId: number): void {
  if (!mayOnUser(actor, action, userId)) throw actor.id === userId ? Forbidden.needs(action, `${action}.own`) : Forbidden.needs(action);
}

const keys = new WeakMap<ReadonlySet<string>, string>();
/** Each distinct set of permissions seen by this process, by its sorted names: its short key. */
const keysByNames = new Map<string, string>();

/**
 * The actor's permissions as one short string, for cache keys that must change when they do: the same
 * for the same permissions, another for any other (worked out once per set: a set is made when
 * credentials are read, and kept with them). Short, because a cache key is hashed on every request
 * that looks it up: an administrator's names joined are over a thousand characters.
 */
export function permissionsKey(actor: Actor): string {
  let key = keys.get(actor.permissions);
  if (key === undefined) {
    const names = [...actor.permissions].sort().join(' ');
    key = keysByNames.get(names);
    if (key === undefined) keysByNames.set(names, (key = `p${keysByNames.size}`));
    keys.set(actor.permissions, key);
  }
  return key;
}
