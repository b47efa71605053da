import type { AuditRecorder } from '../audit/audit-trail.js';
import { type Actor, assertPermitted, assertPermittedOnUser } from '../roles/authorization.js';
import type { Page } from '../shared/page.js';
import { FieldErrors, NotFound, Unprocessable } from '../shared/problems.js';
import { userLimits } from '../shared/limits.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import type { AccountSessionsRepository } from './account-sessions.store.js';
import type { AccessLogItem, LastAccessLogRepository } from './last-access-log.store.js';
import { EMAIL, LOGIN } from './users.service.js';
import type { UsersRepository } from './users.store.js';

/** The answer to validate_login (docs/api.md#validate-a-login-or-email): OnApp's User fields `valid` and `message`. */
export interface LoginValidation {
  valid: boolean;
  message: string;
}

export interface AccountSecurityParts {
  users: UsersRepository;
  accountSessions: AccountSessionsRepository;
  accessLog: LastAccessLogRepository;
  audit: AuditRecorder;
  /** Drops the user's verified credentials in this process (the others hear of the change from the database). */
  credentialsChanged: (userId: number) => void;
  /** Drops every verified credential in this process. */
  allCredentialsChanged: () => void;
}

/**
 * Sessions and access history (docs/security.md#ending-sessions, #the-last-access-log): ending a
 * user's sessions or everyone's, reading a user's last access log, and whether a login or email is
 * free; who may do each is decided here.
 */
export function accountSecurityService({ users, accountSessions, accessLog, audit, credentialsChanged, allCredentialsChanged }: AccountSecurityParts) {
  return {
    /**
     * Ends every session of user `id` at once, in every process (its API cookies and console
     * cookies): holders of users.update, a user for itself (users.update.own). API keys and passwords
     * keep working: they are not sessions.
     */
    async endSessions(actor: Actor, id: number): Promise<void> {
      assertPermittedOnUser(actor, 'users.update', id);
      const ended = await accountSessions.endSessionsOf(id);
      credentialsChanged(id);
      if (!ended) throw new NotFound();
      await audit.record(actor, { action: 'user.sessions.delete', target_type: 'user', target_id: id, changes: {} });
    },

    /** OnApp's drop_all: ends every session of every user, the actor's own too (holders of users.update). */
    async endAllSessions(actor: Actor): Promise<number> {
      assertPermitted(actor, 'users.update');
      const users = await accountSessions.endAllSessions();
      allCredentialsChanged();
      await audit.record(actor, { action: 'user.sessions.delete_all', target_type: 'user', target_id: null, changes: { users } });
      return users;
    },

    /** A page of user `id`'s last access log, oldest first: holders of users.read, a user its own (users.read.own). */
    async lastAccessLog(actor: Actor, id: number, limit: number, offset: number): Promise<Page<AccessLogItem>> {
      assertPermittedOnUser(actor, 'users.read', id);
      if (!(await users.findById(id))) throw new NotFound();
      const total = await accessLog.count(id);
      const items = offset >= total ? [] : await accessLog.page(id, limit, offset);
      return { items, total };
    },

    /** The latest `limit` rows of user `id`'s log, newest first, for one who may read it (the console). */
    async latestAccess(actor: Actor, id: number, limit: number): Promise<AccessLogItem[]> {
      assertPermittedOnUser(actor, 'users.read', id);
      return accessLog.latest(id, limit);
    },

    /**
     * OnApp's validate_login (the PHP wrapper's validate_login and validate_mail): whether the body's
     * `login` or `email` (`{"tmp_holder": {...}}` or bare) could be given to a new user now. It tells
     * whether an account has that name, so only holders of users.create may ask.
     */
    async validateLogin(actor: Actor, body: unknown): Promise<LoginValidation> {
      assertPermitted(actor, 'users.create');
      const fields = unwrapRecord(body ?? {}, 'tmp_holder');
      const errors = new FieldErrors();
      const login = stringField(fields, 'login', errors, { required: false, max: userLimits.loginMax });
      const email = stringField(fields, 'email', errors, { required: false, max: userLimits.email })?.toLowerCase();
      errors.throwIfAny();
      if (login === undefined && email === undefined) throw new Unprocessable({ base: ['tmp_holder must give login or email'] });
      const problems: string[] = [];
      if (login !== undefined && (login.length < userLimits.loginMin || !LOGIN.test(login))) {
        problems.push(`Login must be ${userLimits.loginMin}-${userLimits.loginMax} characters of letters, digits and _ @ . -, not starting with - or @`);
      }
      if (email !== undefined && !EMAIL.test(email)) problems.push('Email is invalid');
      if (problems.length === 0) {
        const taken = await users.takenFields({ ...(login === undefined ? {} : { login }), ...(email === undefined ? {} : { email }) });
        for (const field of taken) problems.push(`${field === 'login' ? 'Login' : 'Email'} has already been taken`);
      }
      if (problems.length > 0) return { valid: false, message: problems.join('; ') };
      const what = login !== undefined && email !== undefined ? 'Login and email are' : login !== undefined ? 'Login is' : 'Email is';
      return { valid: true, message: `${what} available` };
    },
  };
}

export type AccountSecurityService = ReturnType<typeof accountSecurityService>;
