import type { PasswordPolicyDefaults } from '../shared/account-settings.js';
import { passwordPolicyLimits, userLimits } from '../shared/limits.js';
import { FieldErrors } from '../shared/problems.js';

/**
 * The installation's password policy (docs/security.md#password-policy), as `GET
 * /settings/password_policy` shows it and the database stores it.
 */
export interface PasswordPolicy {
  min_length: number;
  require_upper: boolean;
  require_lower: boolean;
  require_digit: boolean;
  require_symbol: boolean;
  /** A new password may not be any of the user's last `history` passwords (the current one included); 0: any. */
  history: number;
  /** Months after which a password signs in only to change itself; 0: never. */
  expiry_months: number;
  /** Failed logins allowed for one login or email from one address within lockout_minutes. */
  lockout_attempts: number;
  lockout_minutes: number;
}

export type { PasswordPolicyDefaults } from '../shared/account-settings.js';

export const POLICY_FIELDS = ['min_length', 'require_upper', 'require_lower', 'require_digit', 'require_symbol', 'history', 'expiry_months', 'lockout_attempts', 'lockout_minutes'] as const;

/** The bounds of each integer field. */
const INTEGER_BOUNDS = {
  min_length: [userLimits.passwordMinChars, passwordPolicyLimits.minLengthMax],
  history: [0, passwordPolicyLimits.historyMax],
  expiry_months: [0, passwordPolicyLimits.expiryMonthsMax],
  lockout_attempts: [1, passwordPolicyLimits.lockoutAttemptsMax],
  lockout_minutes: [1, passwordPolicyLimits.lockoutMinutesMax],
} as const;

/** The lockout's settings (config.ts) the policy's lockout fields stand in for. */
export interface LockoutSettings {
  lockoutMaxFailures: number;
  lockoutWindowSeconds: number;
}

/** The policy while none is stored: the CMI_PASSWORD_* settings, the lockout's from CMI_LOCKOUT_* when unset. */
export function defaultPolicy(defaults: PasswordPolicyDefaults, lockout: LockoutSettings): PasswordPolicy {
  return {
    min_length: defaults.minLength,
    require_upper: defaults.requireUpper,
    require_lower: defaults.requireLower,
    require_digit: defaults.requireDigit,
    require_symbol: defaults.requireSymbol,
    history: defaults.history,
    expiry_months: defaults.expiryMonths,
    lockout_attempts: defaults.lockoutAttempts ?? lockout.lockoutMaxFailures,
    lockout_minutes: defaults.lockoutMinutes ?? Math.ceil(lockout.lockoutWindowSeconds / 60),
  };
}

/**
 * What the per-account lockout counts with (users/lockout.ts maxFailures and windowSeconds): the
 * policy's values once one is stored or CMI_PASSWORD_LOCKOUT_* is set; else CMI_LOCKOUT_MAX_FAILURES
 * and CMI_LOCKOUT_WINDOW exactly as given (a window need not be whole minutes).
 */
export function lockoutOf(policy: PasswordPolicy, stored: boolean, defaults: PasswordPolicyDefaults, lockout: LockoutSettings): { maxFailures: number; windowSeconds: number } {
  return {
    maxFailures: stored || defaults.lockoutAttempts !== undefined ? policy.lockout_attempts : lockout.lockoutMaxFailures,
    windowSeconds: stored || defaults.lockoutMinutes !== undefined ? policy.lockout_minutes * 60 : lockout.lockoutWindowSeconds,
  };
}

function integerValue(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,9}$/.test(value)) return Number(value);
  return undefined;
}

/** true/false as JSON gives them, or as XML and forms do ("true", "false", "1", "0"). */
function booleanValue(value: unknown): boolean | undefined {
  if (value === true || value === 1 || value === 'true' || value === '1') return true;
  if (value === false || value === 0 || value === 'false' || value === '0') return false;
  return undefined;
}

/**
 * `current` with the fields `fields` gives (a PUT may give any of them), naming every bad one in one
 * 422; an unknown field is refused too, so a misspelt rule is never silently ignored.
 */
export function readPolicy(fields: Record<string, unknown>, current: PasswordPolicy): PasswordPolicy {
  const errors = new FieldErrors();
  const next: PasswordPolicy = { ...current };
  for (const name of Object.keys(fields)) {
    if (!(POLICY_FIELDS as readonly string[]).includes(name)) errors.add(name, 'is not a field of the password policy');
  }
  for (const [name, [min, max]] of Object.entries(INTEGER_BOUNDS) as Array<[keyof typeof INTEGER_BOUNDS, readonly [number, number]]>) {
    if (fields[name] === undefined) continue;
    const value = integerValue(fields[name]);
    if (value === undefined || value < min || value > max) errors.add(name, `must be an integer from ${min} to ${max}`);
    else next[name] = value;
  }
  for (const name of ['require_upper', 'require_lower', 'require_digit', 'require_symbol'] as const) {
    if (fields[name] === undefined) continue;
    const value = booleanValue(fields[name]);
    if (value === undefined) errors.add(name, 'must be true or false');
    else next[name] = value;
  }
  errors.throwIfAny();
  return next;
}

/** A stored policy (JSON text) over the defaults: a field missing or out of bounds keeps its default. */
export function parseStoredPolicy(text: string, defaults: PasswordPolicy): PasswordPolicy {
  let stored: unknown;
  try {
    stored = JSON.parse(text);
  } catch {
    return defaults;
  }
  if (typeof stored !== 'object' || stored === null) return defaults;
  const policy = { ...defaults };
  for (const name of POLICY_FIELDS) {
    try {
      Object.assign(policy, readPolicy({ [name]: (stored as Record<string, unknown>)[name] }, policy));
    } catch {
      // Kept at its default.
    }
  }
  return policy;
}

export const RULE_MESSAGES = {
  upper: 'must contain an upper-case letter',
  lower: 'must contain a lower-case letter',
  digit: 'must contain a digit',
  symbol: 'must contain a symbol (a character that is neither a letter nor a digit)',
} as const;

/** The message of the history rule. */
export const historyMessage = (history: number): string =>
  history === 1 ? 'must not be the current password' : `must not be one of the last ${history} passwords`;

/**
 * Every rule of `policy` that `password` breaks, as the 422 names them under `password`
 * (docs/security.md#password-policy); none: it may be set. The length is counted in code points, as
 * the house's minimum always was; the byte limit (userLimits.passwordMaxBytes) is checked apart.
 */
export function brokenRules(policy: PasswordPolicy, password: string): string[] {
  const broken: string[] = [];
  const minimum = Math.max(policy.min_length, userLimits.passwordMinChars);
  if ([...password].length < minimum) broken.push(`is too short (minimum is ${minimum} characters)`);
  if (policy.require_upper && !/\p{Lu}/u.test(password)) broken.push(RULE_MESSAGES.upper);
  if (policy.require_lower && !/\p{Ll}/u.test(password)) broken.push(RULE_MESSAGES.lower);
  if (policy.require_digit && !/\p{Nd}/u.test(password)) broken.push(RULE_MESSAGES.digit);
  if (policy.require_symbol && !/[^\p{L}\p{N}]/u.test(password)) broken.push(RULE_MESSAGES.symbol);
  return broken;
}

/** Whether a password last changed at `changedAt` has expired by `now` under `policy` (months as the calendar counts them, in UTC). */
export function passwordExpired(policy: PasswordPolicy, changedAt: Date | null, now: Date): boolean {
  if (policy.expiry_months === 0 || changedAt === null) return false;
  const expires = new Date(changedAt.getTime());
  expires.setUTCMonth(expires.getUTCMonth() + policy.expiry_months);
  return now.getTime() >= expires.getTime();
}

/**
 * A generated password `policy` accepts: random words from `generate` until it is long enough, then
 * one character of each class the policy requires (the randomness is all `generate`'s).
 */
export function generatedToFit(policy: PasswordPolicy, generate: () => string): string {
  let password = generate();
  while ([...password].length < policy.min_length) password += generate();
  return `${password}${policy.require_upper ? 'A' : ''}${policy.require_lower ? 'a' : ''}${policy.require_digit ? '7' : ''}${policy.require_symbol ? '!' : ''}`;
}
