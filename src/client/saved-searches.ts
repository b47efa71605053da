import { savedSearchResource } from '../tracker/saved-search.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

/** A saved search (docs/search.md#saved-searches). */
export type SavedSearch = RecordOf<typeof savedSearchResource>;

/** The fields of `POST .../saved_searches`; `PUT` takes any of them. */
export interface SavedSearchFields {
  name: string;
  /** In the search language (docs/search.md). */
  query: string;
  /** Seen by everyone who may read errors (default false). */
  shared?: boolean;
}

const SAVED = '/sysadmin_tools/infrastructure/saved_searches';

/** `client.savedSearches`: the own saved searches and the shared ones of others (docs/client.md#methods). */
export function savedSearchesApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(savedSearchResource, http.format === 'json' ? unwrap(savedSearchResource, answer.body) : answer.body, http.format);
  return {
    list(params: PageParams = {}): Promise<Page<SavedSearch>> {
      return fetchPage(http, savedSearchResource, SAVED, params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<SavedSearch, void, undefined> {
      return walkPages((page) => fetchPage(http, savedSearchResource, SAVED, { ...params, page }), (search) => search.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<SavedSearch> {
      return one(await http.request('GET', `${SAVED}/${id}`, call));
    },

    async create(fields: SavedSearchFields, call: RequestOptions = {}): Promise<SavedSearch> {
      return one(await http.request('POST', SAVED, { ...call, body: { saved_search: fields } }));
    },

    /** Answers nothing (204); only the owner changes one. */
    async update(id: number, changes: Partial<SavedSearchFields>, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', `${SAVED}/${id}`, { ...call, body: { saved_search: changes } });
    },

    async delete(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', `${SAVED}/${id}`, call);
    },
  };
}
