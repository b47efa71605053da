import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Clock } from '../shared/clock.js';
import { FieldErrors, Unprocessable } from '../shared/problems.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import type { AccountMailer } from './account-mail.js';
import type { AccountUnlockRepository } from './account-unlock.store.js';
import { unlockAccount } from './lockout.js';
import type { LoginFailuresRepository } from './login-failures.store.js';
import type { User } from './user.js';
import type { UsersRepository } from './users.store.js';

/** The shortest an unlock token lives, even when the lock ends sooner (a mail may be read late; the lock has then ended anyway). */
const MIN_TOKEN_MS = 15 * 60_000;

/** The one answer to any token that does not unlock (unknown user, wrong, used or expired token): it tells nothing more. */
export const UNLOCK_REFUSED = 'is invalid or has expired';

/** Locks this process remembers having handled (their users); past it, the memory starts over. */
const MAX_REMEMBERED_LOCKS = 10_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export interface AccountUnlockParts {
  tokens: AccountUnlockRepository;
  failures: LoginFailuresRepository;
  users: UsersRepository;
  /** Undefined without CMI_SMTP_URL: no mail is sent, and unlocking is by `cmi local users unlock` only. */
  mailer: AccountMailer | undefined;
  /** The console's public address (CMI_PUBLIC_URL, else http://HOST:PORT): the link starts with it. */
  publicUrl: string;
  clock: Clock;
  audit: AuditRecorder;
  /** Where a mail that could not be sent goes (the app's background-fault reporter). */
  onFault: (error: unknown) => void;
}

/**
 * Unlocking by mail (docs/security.md#unlocking-by-mail): when a known account's name locks, a random
 * token (256 bits) is stored as its SHA-256, valid until the lock ends (at least 15 minutes), and
 * mailed once per lock window as a link to the console's `/console/unlock`; POST
 * /users/:id/unlock_account with it ends the lock, once. Never the password, the hash or anything
 * but the link in the mail; never the token in a log or an audit row.
 */
export function accountUnlock({ tokens, failures, users, mailer, publicUrl, clock, audit, onFault }: AccountUnlockParts) {
  /** User id to the end of the lock this process last handled for it (epoch ms). */
  const handled = new Map<number, number>();
  async function mailLink(user: User, until: Date): Promise<void> {
    if (mailer === undefined) return;
    const now = clock();
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Math.max(until.getTime(), now.getTime() + MIN_TOKEN_MS));
    if (!(await tokens.issue(user.id, sha256(token), expiresAt, now))) return;
    const link = `${publicUrl}/console/unlock?user=${user.id}&token=${token}`;
    await mailer.send({
      to: user.email,
      subject: 'Your cmi account is locked',
      text: [
        `Hello ${user.login},`,
        '',
        `Too many failed sign-ins locked your account until ${until.toISOString().replace(/\.\d{3}Z$/, 'Z')}.`,
        'If that was you, unlock it now by opening this link (it works once):',
        '',
        link,
        '',
        'If it was not you, someone is guessing your password: unlock only when you need to, and',
        'consider changing your password. The link expires when the lock ends.',
        '',
      ].join('\n'),
    });
  }

  return {
    /** Mail is configured: the lockout's refusal says an unlock link is mailed. */
    mailing: mailer !== undefined,

    /** A known user's name just locked until `until`: mails the unlock link, once per lock window, apart from the request. */
    locked(user: User, until: Date): void {
      // Every guess at a locked name is refused through here: the lock is handled once per process, so
      // a flood of guesses costs no write (the database then keeps it to one mail across processes).
      if (mailer === undefined || handled.get(user.id) === until.getTime()) return;
      if (handled.size >= MAX_REMEMBERED_LOCKS) handled.clear();
      handled.set(user.id, until.getTime());
      mailLink(user, until).catch(onFault);
    },

    /**
     * OnApp's unlock_account (`{"tmp_holder": {"unlock_token": "..."}}` or bare): with the token mailed
     * to user `userId`, its name's counters are cleared from every address and the token is used up.
     * Anything else is the same 422. Public: the token is the credential.
     */
    async unlock(userId: number, body: unknown, where: { address: string; requestId: string }): Promise<void> {
      const errors = new FieldErrors();
      const token = stringField(unwrapRecord(body ?? {}, 'tmp_holder'), 'unlock_token', errors, { required: true, max: 128 });
      errors.throwIfAny();
      const stored = await tokens.current(userId, clock());
      const given = Buffer.from(sha256(token as string));
      const matches = stored !== undefined && timingSafeEqual(Buffer.from(stored), given);
      const user = matches ? await users.findById(userId) : undefined;
      if (!matches || user === undefined || !(await tokens.consume(userId, stored))) throw new Unprocessable({ unlock_token: [UNLOCK_REFUSED] });
      await unlockAccount(failures, user);
      await audit.record({ id: user.id, login: user.login, address: where.address, requestId: where.requestId }, { action: 'user.unlock', target_type: 'user', target_id: user.id, changes: { by: 'unlock_token' } });
    },
  };
}

export type AccountUnlock = ReturnType<typeof accountUnlock>;
