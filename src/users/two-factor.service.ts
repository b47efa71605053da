import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Clock } from '../shared/clock.js';
import { type Actor, may } from '../roles/authorization.js';
import { FieldErrors, Forbidden, FORBIDDEN_MESSAGE, NotFound, Unprocessable } from '../shared/problems.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import { accountName, type Lockout } from './lockout.js';
import { hashRecoveryCode, matchingStep, newRecoveryCode, newTotpSecret, otpauthUri, RECOVERY_CODES } from './totp.js';
import type { TwoFactorRepository } from './two-factor.store.js';
import type { UsersRepository } from './users.store.js';
import { isYubiKeyOtp, YUBIKEY_REFUSAL } from './yubi-keys.service.js';

/** What the enrolment answers once: the secret, its URI and the recovery codes (never again). */
export interface TwoFactorEnrolment {
  otpauth_uri: string;
  secret: string;
  /** The codes as a JSON array's text (the resource's `json` field). */
  recovery_codes: string;
  enabled: false;
}

/** What GET shows of a second factor: never its secret. */
export interface TwoFactorStatus {
  enabled: boolean;
  confirmed_at: Date | null;
  recovery_codes_left: number;
}

/** Longest code read (a TOTP code is 6 digits, a recovery code 19 characters with its dashes). */
const MAX_CODE = 64;

const OWN_ONLY = `${FORBIDDEN_MESSAGE} (only the user itself enrols and confirms its second factor)`;
export const OTP_HEADER = 'x-cmi-otp';

/** How a code was accepted: a TOTP code of the authenticator, or one of the recovery codes (then used up). */
export type CodeKind = 'totp' | 'recovery';

/**
 * The second factor (docs/security.md#second-factor): a TOTP secret a user enrols for itself and
 * confirms with a code, single-use recovery codes, and who may see or remove it. Every code given
 * is counted on the lockout's counters like a password (a right one as a right password).
 */
/** Through a session, the actor's own `current_password` in the body (users.service.ts requireCurrentPassword). */
export type CurrentPasswordProof = (actor: Actor, body: unknown, root: string) => Promise<void>;

export function twoFactorService(repository: TwoFactorRepository, users: UsersRepository, clock: Clock, audit: AuditRecorder, credentialsChanged: (userId: number) => void, guesses?: Lockout, currentPassword: CurrentPasswordProof = () => Promise.resolve()) {
  const record = (actor: Actor, action: string, userId: number, changes: Record<string, unknown> = {}) =>
    audit.record(actor, { action, target_type: 'user', target_id: userId, changes });

  async function userOf(userId: number) {
    const user = await users.findById(userId);
    if (!user) throw new NotFound();
    return user;
  }

  /**
   * Whether `code` is a current TOTP code (of a step not accepted before) or an unused recovery code
   * of the user's; the guess counted on the lockout first (429 once it is full). A recovery code is
   * used up, and audited, here.
   */
  async function checkCode(actor: Actor, userId: number, login: string, code: string, address: string | undefined): Promise<CodeKind | undefined> {
    // Said at once, counted on nothing: a YubiKey's OTP cannot be checked here (docs/security.md#yubikeys).
    if (isYubiKeyOtp(code.toLowerCase())) throw new Unprocessable({ base: [YUBIKEY_REFUSAL] });
    const charged = guesses === undefined || address === undefined ? undefined : await guesses.charge({ name: accountName(login), typed: login, address, userId });
    const state = await repository.find(userId);
    let kind: CodeKind | undefined;
    if (state !== undefined && state.confirmed_at !== null) {
      const step = matchingStep(state.secret, code, clock().getTime(), state.last_step);
      if (step !== undefined && (await repository.acceptStep(userId, step))) kind = 'totp';
      else if (step === undefined && (await repository.useRecoveryCode(userId, hashRecoveryCode(code), clock()))) {
        kind = 'recovery';
        await record(actor, 'user.two_factor.recovery_code_use', userId);
      }
    }
    if (charged !== undefined) {
      if (kind === undefined) await guesses?.failed(charged);
      else await guesses?.succeeded(charged);
    }
    return kind;
  }

  return {
    /** A new pending second factor for the actor itself, answered once; refused while one is confirmed. */
    async enrol(actor: Actor, userId: number, body?: unknown): Promise<TwoFactorEnrolment> {
      if (actor.id !== userId) throw new Forbidden(OWN_ONLY);
      const user = await userOf(userId);
      // A stolen session cookie alone must not give an account a factor its owner does not hold
      // (docs/security.md#second-factor): through a session, the password too, as for a new password.
      await currentPassword(actor, body, 'two_factor');
      const secret = newTotpSecret();
      const codes = Array.from({ length: RECOVERY_CODES }, newRecoveryCode);
      const outcome = await repository.enrol(userId, secret, codes.map(hashRecoveryCode), clock());
      if (outcome === 'not_found') throw new NotFound();
      if (outcome === 'enabled') throw new Unprocessable({ base: ['A second factor is enabled: disable it first (DELETE with a current code in X-Cmi-OTP)'] });
      await record(actor, 'user.two_factor.create', userId);
      return { otpauth_uri: otpauthUri(user.login, secret), secret, recovery_codes: JSON.stringify(codes), enabled: false };
    },

    /** Confirms the pending second factor with a current code (`{"two_factor": {"code": "123456"}}`). */
    async confirm(actor: Actor, userId: number, body: unknown): Promise<TwoFactorStatus> {
      if (actor.id !== userId) throw new Forbidden(OWN_ONLY);
      const user = await userOf(userId);
      const errors = new FieldErrors();
      const code = stringField(unwrapRecord(body ?? {}, 'two_factor'), 'code', errors, { required: true, max: MAX_CODE });
      errors.throwIfAny();
      const state = await repository.find(userId);
      if (state === undefined) throw new Unprocessable({ base: ['No second factor to confirm: enrol first (POST)'] });
      if (state.confirmed_at !== null) throw new Unprocessable({ base: ['The second factor is already enabled'] });
      const charged = guesses === undefined || actor.address === undefined ? undefined : await guesses.charge({ name: accountName(user.login), typed: user.login, address: actor.address, userId });
      const step = matchingStep(state.secret, (code as string).trim(), clock().getTime(), null);
      if (step === undefined) {
        if (charged !== undefined) await guesses?.failed(charged);
        throw new Unprocessable({ code: ['is incorrect'] });
      }
      if (charged !== undefined) await guesses?.succeeded(charged);
      if (!(await repository.confirm(userId, step, clock()))) throw new Unprocessable({ base: ['The second factor is already enabled'] });
      credentialsChanged(userId);
      await record(actor, 'user.two_factor.confirm', userId);
      const confirmed = await repository.find(userId);
      return { enabled: true, confirmed_at: confirmed?.confirmed_at ?? clock(), recovery_codes_left: confirmed?.recovery_codes_left ?? 0 };
    },

    /** Whether the user has a second factor, since when, and how many recovery codes it has left: for itself and holders of users.read. */
    async status(actor: Actor, userId: number): Promise<TwoFactorStatus> {
      if (actor.id !== userId && !may(actor, 'users.read')) throw Forbidden.needs('users.read');
      await userOf(userId);
      const state = await repository.find(userId);
      if (state === undefined || state.confirmed_at === null) return { enabled: false, confirmed_at: null, recovery_codes_left: 0 };
      return { enabled: true, confirmed_at: state.confirmed_at, recovery_codes_left: state.recovery_codes_left };
    },

    /**
     * Removes the user's second factor: the user itself with a current code or a recovery code
     * (`otp`, the X-Cmi-OTP header), or a holder of users.update for another user.
     */
    async disable(actor: Actor, userId: number, otp: string | undefined): Promise<void> {
      if (actor.id === userId) {
        const user = await userOf(userId);
        const state = await repository.find(userId);
        if (state === undefined) throw new NotFound();
        // A pending one has no code proven yet: removing it needs none.
        if (state.confirmed_at !== null) {
          if (otp === undefined || otp.trim() === '') throw new Unprocessable({ base: ['X-Cmi-OTP must carry a current code or a recovery code'] });
          if (otp.length > MAX_CODE || (await checkCode(actor, userId, user.login, otp.trim(), actor.address)) === undefined) {
            throw new Unprocessable({ base: ['X-Cmi-OTP is incorrect'] });
          }
        }
      } else {
        if (!may(actor, 'users.update')) throw Forbidden.needs('users.update');
        await userOf(userId);
      }
      if (!(await repository.remove(userId, clock()))) throw new NotFound();
      credentialsChanged(userId);
      await record(actor, 'user.two_factor.delete', userId);
    },

    /** The second step of a sign-in (the console): whether `code` is the user's current code or a recovery code, counted on the lockout. */
    verifySignInCode: (actor: Actor, userId: number, login: string, code: string, address: string) =>
      code.length > MAX_CODE ? Promise.resolve(undefined) : checkCode(actor, userId, login, code.trim(), address),
  };
}

export type TwoFactorService = ReturnType<typeof twoFactorService>;
