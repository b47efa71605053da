import { yubiKeyResource } from '../users/yubi-key.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** One of a user's YubiKeys (docs/api.md#yubikeys): its public id in `otp`, never a factor in cmi. */
export type YubiKey = RecordOf<typeof yubiKeyResource>;

/**
 * `client.users.yubiKeys`: a user's YubiKeys as OnApp's PHP wrapper calls them (docs/api.md#yubikeys).
 * cmi keeps only each key's public id and never accepts a YubiKey OTP (docs/security.md#yubikeys).
 */
export function yubiKeysApi(http: Transport) {
  const path = (userId: number) => `/users/${userId}/yubi_keys`;
  const one = (answer: Answer) => decodeRecord(yubiKeyResource, http.format === 'json' ? unwrap(yubiKeyResource, answer.body) : answer.body, http.format);
  return {
    /** One page of user `userId`'s keys: `{ items, total, page, limit }`. */
    list(userId: number, params: PageParams = {}): Promise<Page<YubiKey>> {
      return fetchPage(http, yubiKeyResource, path(userId), params);
    },

    /** Every key of user `userId`, page by page. */
    all(userId: number, params: Omit<PageParams, 'page'> = {}): AsyncGenerator<YubiKey, void, undefined> {
      return walkPages((page) => fetchPage(http, yubiKeyResource, path(userId), { ...params, page }), (key) => key.id);
    },

    async get(userId: number, keyId: number, call: RequestOptions = {}): Promise<YubiKey> {
      return one(await http.request('GET', `${path(userId)}/${keyId}`, call));
    },

    /** Records a key from an OTP it typed (422 naming `otp` when it is no YubiKey OTP or the key is recorded already). */
    async create(userId: number, fields: { otp: string; label?: string }, call: RequestOptions = {}): Promise<YubiKey> {
      // Not retried: a second try after a first that reached the server would be refused as taken.
      return one(await http.request('POST', path(userId), { ...call, body: { yubi_key: fields }, maxRetries: 0 }));
    },

    async delete(userId: number, keyId: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', `${path(userId)}/${keyId}`, call);
    },
  };
}
