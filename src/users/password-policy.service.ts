import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted } from '../roles/authorization.js';
import type { Clock } from '../shared/clock.js';
import { unwrapRecord } from '../shared/request-body.js';
import { brokenRules, defaultPolicy, type PasswordPolicyDefaults, historyMessage, type LockoutSettings, lockoutOf, parseStoredPolicy, type PasswordPolicy, passwordExpired, readPolicy } from './password-policy.js';
import type { PasswordPolicyRepository } from './password-policy.store.js';
import { verifyPassword } from './passwords.js';
import { difference } from '../audit/audit-event.js';

/** What the accounts (users.service.ts) ask of the policy whenever a password is set. */
export interface PasswordRules {
  /** Every rule `password` breaks (the policy read afresh); for a change of user `userId`'s own, its history too. */
  broken(password: string, history?: { userId: number; currentHash: () => Promise<string | undefined> }): Promise<string[]>;
  /** User `userId`'s password was replaced: `replacedHash` becomes one of its earlier ones, as many as the history keeps. */
  replaced(userId: number, replacedHash: string | undefined): Promise<void>;
}

/**
 * The password policy: shown and changed by holders of password_policy.manage, stored in the
 * database for every process, audited as `password_policy.update`. Each process holds the policy it
 * last read (`current`, what the lockout and the expiry check use at every request) and reads it again
 * every CMI_PASSWORD_POLICY_REFRESH ms while `startRefreshing` runs (a change stored by any process
 * governs logins and expiry everywhere within about that long; a new password's rules are always
 * read afresh).
 */
export function passwordPolicyService(
  repository: PasswordPolicyRepository,
  clock: Clock,
  audit: AuditRecorder | undefined,
  defaults: PasswordPolicyDefaults,
  lockout: LockoutSettings,
) {
  const fallback = defaultPolicy(defaults, lockout);
  let held = { policy: fallback, stored: false };
  let timer: NodeJS.Timeout | undefined;

  async function read(): Promise<{ policy: PasswordPolicy; stored: boolean }> {
    const text = await repository.readPolicy();
    held = text === undefined ? { policy: fallback, stored: false } : { policy: parseStoredPolicy(text, fallback), stored: true };
    return held;
  }

  const rules: PasswordRules = {
    async broken(password, history) {
      const { policy } = await read();
      const broken = brokenRules(policy, password);
      if (broken.length > 0 || history === undefined || policy.history === 0) return broken;
      // At most policy.history argon2id verifies (24: docs/security.md#password-policy), stopping at the first match.
      const current = await history.currentHash();
      const hashes = [...(current === undefined ? [] : [current]), ...(await repository.earlierHashes(history.userId, policy.history - 1))];
      for (const hash of hashes) {
        if (await verifyPassword(hash, password)) return [historyMessage(policy.history)];
      }
      return [];
    },
    async replaced(userId, replacedHash) {
      const { policy } = await read();
      await repository.keepEarlier(userId, replacedHash, Math.max(0, policy.history - 1), clock());
    },
  };

  return {
    /** Read once before the app answers; the defaults meanwhile. */
    // A process that starts while the database cannot be reached (a worker replaced during an outage)
    // starts anyway, on the defaults, until the refresh reads the stored policy (docs/operations.md#when-the-database-is-sick).
    load: () => read().then(() => undefined, () => undefined),

    /** The policy this process holds now (at most about defaults.refreshMs old while refreshing). */
    current: (): PasswordPolicy => held.policy,

    /** What the lockout counts with now (password-policy.ts lockoutOf). */
    lockout: () => lockoutOf(held.policy, held.stored, defaults, lockout),

    /** Whether `user`'s password has expired under the policy held now. */
    expired: (user: { password_changed_at: Date | null }): boolean => passwordExpired(held.policy, user.password_changed_at, clock()),

    rules,

    /** Reads the policy again every defaults.refreshMs, failures ignored (the last one read holds) until `stopRefreshing`. */
    startRefreshing(): void {
      timer ??= setInterval(() => void read().catch(() => {}), defaults.refreshMs);
      timer.unref();
    },
    stopRefreshing(): void {
      clearInterval(timer);
      timer = undefined;
    },

    async show(actor: Actor): Promise<PasswordPolicy> {
      assertPermitted(actor, 'password_policy.manage');
      return (await read()).policy;
    },

    /** Any of the policy's fields (`{"password_policy": {...}}` or bare); every bad one named in one 422. */
    async update(actor: Actor, body: unknown): Promise<PasswordPolicy> {
      assertPermitted(actor, 'password_policy.manage');
      const before = (await read()).policy;
      const after = readPolicy(unwrapRecord(body ?? {}, 'password_policy'), before);
      await repository.writePolicy(JSON.stringify(after));
      held = { policy: after, stored: true };
      await audit?.record(actor, { action: 'password_policy.update', target_type: 'password_policy', target_id: null, changes: difference(before, after) });
      return after;
    },
  };
}

export type PasswordPolicyService = ReturnType<typeof passwordPolicyService>;
