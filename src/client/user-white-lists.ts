import { userWhiteListResource } from '../users/user-white-list.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** One of a user's allowed addresses (docs/api.md#allowed-addresses). */
export type UserWhiteList = RecordOf<typeof userWhiteListResource>;

/** The fields of an entry: `ip` an address or CIDR range, IPv4 or IPv6. */
export interface UserWhiteListFields {
  ip: string;
  description?: string;
}

/**
 * `client.users.whiteLists`: a user's allowed addresses, OnApp's `user_white_lists`
 * (docs/api.md#allowed-addresses). With at least one, the user is refused from every other address.
 */
export function userWhiteListsApi(http: Transport) {
  const path = (userId: number) => `/users/${userId}/user_white_lists`;
  const one = (answer: Answer) => decodeRecord(userWhiteListResource, http.format === 'json' ? unwrap(userWhiteListResource, answer.body) : answer.body, http.format);
  return {
    /** One page of user `userId`'s entries: `{ items, total, page, limit }`. */
    list(userId: number, params: PageParams = {}): Promise<Page<UserWhiteList>> {
      return fetchPage(http, userWhiteListResource, path(userId), params);
    },

    /** Every entry of user `userId`, page by page. */
    all(userId: number, params: Omit<PageParams, 'page'> = {}): AsyncGenerator<UserWhiteList, void, undefined> {
      return walkPages((page) => fetchPage(http, userWhiteListResource, path(userId), { ...params, page }), (entry) => entry.id);
    },

    async get(userId: number, id: number, call: RequestOptions = {}): Promise<UserWhiteList> {
      return one(await http.request('GET', `${path(userId)}/${id}`, call));
    },

    /** Adds an entry (422 naming `ip` when it is no address or range, or the user has it already). */
    async create(userId: number, fields: UserWhiteListFields, call: RequestOptions = {}): Promise<UserWhiteList> {
      // Not retried: a second try after a first that reached the server would be refused as taken.
      return one(await http.request('POST', path(userId), { ...call, body: { user_white_list: { description: '', ...fields } }, maxRetries: 0 }));
    },

    /** Answers nothing (204); `get` reads the changed entry. */
    async update(userId: number, id: number, changes: Partial<UserWhiteListFields>, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', `${path(userId)}/${id}`, { ...call, body: { user_white_list: changes } });
    },

    async delete(userId: number, id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', `${path(userId)}/${id}`, call);
    },
  };
}
