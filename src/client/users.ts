import { userResource } from '../users/user.resource.js';
import { userApiKeyResource } from '../users/user-api-key.resource.js';
import { accountSecurityApi } from './account-security.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, type User, unwrap } from './records.js';
import type { Answer, Query, RequestOptions, Transport } from './transport.js';
import { userWhiteListsApi } from './user-white-lists.js';
import { twoFactorApi } from './two-factor.js';
import { yubiKeysApi } from './yubi-keys.js';

/** The fields of `POST /users` (docs/api.md#users); `role` is `admin` or `user`, `role_ids` any roles. */
export interface NewUser {
  login: string;
  email: string;
  password: string;
  first_name?: string;
  last_name?: string;
  time_zone?: string | null;
  locale?: string | null;
  role?: 'admin' | 'user';
  /** The roles the user holds, by id (`client.roles`); replaces them on an update. */
  role_ids?: number[];
  /** The billing bucket the user belongs to (`client.buckets`), null for none. */
  bucket_id?: number | null;
  /** The user group it belongs to (null: none); its roles apply to the user. */
  user_group_id?: number | null;
}

/** What narrows the users list (docs/api.md#users-list-filters); filters combine. */
export interface UserFilters {
  /** Text in the login, email, first or last name, in any case. */
  q?: string;
  status?: 'active' | 'suspended' | 'deleted';
  /** Users holding this role themselves. */
  role_id?: number;
  /** Members of this user group. */
  user_group_id?: number;
}

export type UserListParams = PageParams & UserFilters;

/** The page and call options apart from the filters, which go into the query. */
export function splitUserListParams<T extends PageParams>(params: T): { page: PageParams; query: Query } {
  const { page, perPage, signal, timeout, maxRetries, ...rest } = params;
  return { page: { page, perPage, signal, timeout, maxRetries }, query: rest as Query };
}

/** The fields of `PUT /users/:id` (docs/api.md#put-usersid): any of those of a new user. */
export type UserChanges = Partial<NewUser>;

/** A user with the API key `make_new_api_key` just made (shown once). */
export type UserWithApiKey = User & { api_key: string };

/** One of a user's API keys (docs/api.md#api-keys): what it is for, never the key. */
export type UserApiKey = Omit<RecordOf<typeof userApiKeyResource>, 'api_key'>;
/** A key just made, with the key itself (shown this once). */
export type UserApiKeyWithKey = UserApiKey & { api_key: string };

/** `client.users`: OnApp's user management (docs/client.md#users). */
export function usersApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(userResource, http.format === 'json' ? unwrap(userResource, answer.body) : answer.body, http.format);
  const path = (id: number) => `/users/${id}`;
  const list = (params: UserListParams) => {
    const { page, query } = splitUserListParams(params);
    return fetchPage(http, userResource, '/users', { ...page, query });
  };

  return {
    /** Sessions and access history: `sessions.drop`, `sessions.dropAll`, `lastAccessLog`, `validateLogin`, `unlockAccount` (client/account-security.ts). */
    ...accountSecurityApi(http),

    /** One page: `{ items, total, page, limit }`, narrowed by the filters given. */
    list(params: UserListParams = {}): Promise<Page<User>> {
      return list(params);
    },

    /** Every user the filters keep, page by page (`perPage` a request, default the server's). */
    all(params: Omit<UserListParams, 'page'> = {}): AsyncGenerator<User, void, undefined> {
      return walkPages((page) => list({ ...params, page }), (user) => user.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<User> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewUser, call: RequestOptions = {}): Promise<User> {
      return one(await http.request('POST', '/users', { ...call, body: { user: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed record. */
    async update(id: number, changes: UserChanges, call: RequestOptions = {}): Promise<void> {
      const credentials = changes.login !== undefined || changes.email !== undefined || changes.password !== undefined;
      await http.request('PUT', path(id), { ...call, body: { user: changes }, credentials });
    },

    /**
     * Marks the user deleted; deleting a deleted user removes the record (docs/api.md#delete-usersid).
     * Never retried: this DELETE is not idempotent, a second try after a first that reached the server
     * (a 502 from a proxy, a timeout) would remove the record.
     */
    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), { ...call, maxRetries: 0 });
    },

    async suspend(id: number, call: RequestOptions = {}): Promise<User> {
      return one(await http.request('POST', `${path(id)}/suspend`, call));
    },

    async activate(id: number, call: RequestOptions = {}): Promise<User> {
      return one(await http.request('POST', `${path(id)}/activate`, call));
    },

    /** A user's second factor (docs/api.md#second-factor): client/two-factor.ts. */
    twoFactor: twoFactorApi(http),

    /**
     * A user's named API keys (docs/api.md#api-keys). `create` answers the key once, in `api_key`;
     * `revoke` ends it at once (and the user's sessions). Calls go with the credentials, not the
     * session cookie, so no current password is asked for.
     */
    apiKeys: {
      /** One page of user `userId`'s keys: `{ items, total, page, limit }`. */
      list(userId: number, params: PageParams = {}): Promise<Page<UserApiKey>> {
        return fetchPage(http, userApiKeyResource, `${path(userId)}/user_api_keys`, params);
      },

      /** Every key of user `userId`, page by page. */
      all(userId: number, params: Omit<PageParams, 'page'> = {}): AsyncGenerator<UserApiKey, void, undefined> {
        return walkPages((page) => fetchPage(http, userApiKeyResource, `${path(userId)}/user_api_keys`, { ...params, page }), (key) => key.id);
      },

      async create(userId: number, description: string, call: RequestOptions = {}): Promise<UserApiKeyWithKey> {
        // Not retried: a second try after a first that reached the server would make a second key.
        const answer = await http.request('POST', `${path(userId)}/user_api_keys`, { ...call, body: { user_api_key: { description } }, credentials: true, maxRetries: 0 });
        return decodeRecord(userApiKeyResource, http.format === 'json' ? unwrap(userApiKeyResource, answer.body) : answer.body, http.format) as UserApiKeyWithKey;
      },

      async revoke(userId: number, keyId: number, call: RequestOptions = {}): Promise<void> {
        await http.request('DELETE', `${path(userId)}/user_api_keys/${keyId}`, { ...call, credentials: true });
      },
    },

    /** A user's allowed addresses (docs/api.md#allowed-addresses): client/user-white-lists.ts. */
    whiteLists: userWhiteListsApi(http),

    /** A user's YubiKeys (docs/api.md#yubikeys): client/yubi-keys.ts. */
    yubiKeys: yubiKeysApi(http),

    /**
     * A new default API key, in `api_key` of the answer (shown once): the user's previous default key
     * stops working, its named keys go on (docs/api.md#make-a-new-api-key).
     */
    async makeNewApiKey(id: number, call: RequestOptions = {}): Promise<UserWithApiKey> {
      return one(await http.request('POST', `${path(id)}/make_new_api_key`, { ...call, credentials: true })) as UserWithApiKey;
    },
  };
}
