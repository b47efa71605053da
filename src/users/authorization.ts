import { Forbidden } from '../shared/problems.js';
import type { Role } from './user.js';

/** Who acts: a user through the API (its record will do), or the operator at the command line. */
export interface Actor {
  id: number | null;
  role: Role;
  /** The client's address, where a password it proves is counted as a guess (docs/security.md#brute-force). */
  address?: string;
  /**
   * Whether it acts through a session cookie, which a thief may hold alone: changing a login, email or
   * password, or making an API key, then needs the actor's current password (docs/security.md#self-service).
   */
  viaSession?: boolean;
}

/** The operator at the command line, who may do anything an administrator may. */
export const OPERATOR: Actor = { id: null, role: 'admin' };

export const isAdmin = (actor: Actor): boolean => actor.role === 'admin';

/** Administrators only (403 otherwise). */
export function assertAdmin(actor: Actor): void {
  if (!isAdmin(actor)) throw new Forbidden();
}

/** Administrators act on any user; a user only on itself (403 for any other id, existing or not). */
export function assertMayActOn(actor: Actor, userId: number): void {
  if (!isAdmin(actor) && actor.id !== userId) throw new Forbidden();
}
