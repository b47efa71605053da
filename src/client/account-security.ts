import { lastAccessLogItemResource, loginValidationResource } from '../users/account-security.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { RequestOptions, Transport } from './transport.js';

/** One row of a user's last access log (docs/api.md#last-access-log). */
export type AccessLogItem = RecordOf<typeof lastAccessLogItemResource>;

/** Whether a login or email is free for a new user (docs/api.md#validate-a-login-or-email). */
export type LoginValidation = RecordOf<typeof loginValidationResource>;

/**
 * Sessions and access history, part of `client.users` (docs/client.md#users): ending sessions, the
 * last access log, validate_login, unlock_account. Calls that end sessions go with the credentials (the client's own
 * session may be among those ended; its next call signs in again).
 */
export function accountSecurityApi(http: Transport) {
  const logPath = (userId: number) => `/users/${userId}/last_access_log`;
  return {
    sessions: {
      /** Ends every session of user `userId` at once (its API keys and password keep working). */
      async drop(userId: number, call: RequestOptions = {}): Promise<void> {
        await http.request('DELETE', `/users/${userId}/sessions`, { ...call, credentials: true });
      },

      /** OnApp's drop_all: ends every user's sessions (holders of users.update). */
      async dropAll(call: RequestOptions = {}): Promise<void> {
        await http.request('DELETE', '/users/drop_all', { ...call, credentials: true });
      },
    },

    lastAccessLog: {
      /** One page of user `userId`'s sign-ins, oldest first: `{ items, total, page, limit }`. */
      list(userId: number, params: PageParams = {}): Promise<Page<AccessLogItem>> {
        return fetchPage(http, lastAccessLogItemResource, logPath(userId), params);
      },

      /** Every row of user `userId`'s log, page by page. */
      all(userId: number, params: Omit<PageParams, 'page'> = {}): AsyncGenerator<AccessLogItem, void, undefined> {
        return walkPages((page) => fetchPage(http, lastAccessLogItemResource, logPath(userId), { ...params, page }), (item) => item.id);
      },
    },

    /**
     * OnApp's unlock_account: ends user `userId`'s lockout with the `unlock_token` its lock's mail carried
     * (docs/api.md#unlock-an-account); once, and with no credentials needed (the token is the credential).
     * Any other token is a 422 naming `unlock_token`.
     */
    async unlockAccount(userId: number, unlockToken: string, call: RequestOptions = {}): Promise<void> {
      // Not retried: a second try after a first that reached the server would find the token used up.
      await http.request('POST', `/users/${userId}/unlock_account`, { ...call, body: { tmp_holder: { unlock_token: unlockToken } }, maxRetries: 0 });
    },

    /** Whether `name` is free as a new user's login (or, with `{ email }`, as its email): holders of users.create. */
    async validateLogin(name: { login: string } | { email: string }, call: RequestOptions = {}): Promise<LoginValidation> {
      const answer = await http.request('POST', '/users/validate_login', { ...call, body: { tmp_holder: name } });
      return decodeRecord(loginValidationResource, http.format === 'json' ? unwrap(loginValidationResource, answer.body) : answer.body, http.format);
    },
  };
}
