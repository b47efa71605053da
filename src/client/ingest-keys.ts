import { ingestKeyResource } from '../ingest/ingest-key.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import { decodeRecord, type IngestKey, unwrap } from './records.js';
import type { Answer, RequestOptions, Transport } from './transport.js';

const PATH = '/sysadmin_tools/infrastructure/ingest_keys';

/** The fields of a new ingest key (docs/sentry.md#ingest-keys); only `label` is required. */
export interface NewIngestKey {
  label: string;
  component?: string | null;
  enabled?: boolean;
  rate_limit_per_minute?: number;
  /** Origins separated by spaces, a list of them, or `*`. */
  allowed_origins?: string | string[];
}

/** What `PUT .../ingest_keys/:id` changes: any of the fields of a new key. */
export type IngestKeyChanges = Partial<NewIngestKey>;

/** `client.ingestKeys`: write-only keys of the Sentry endpoints, each with its DSN (docs/sentry.md). */
export function ingestKeysApi(http: Transport) {
  const one = (answer: Answer) => decodeRecord(ingestKeyResource, http.format === 'json' ? unwrap(ingestKeyResource, answer.body) : answer.body, http.format);
  const path = (id: number) => `${PATH}/${id}`;
  return {
    list(params: PageParams = {}): Promise<Page<IngestKey>> {
      return fetchPage(http, ingestKeyResource, PATH, params);
    },

    all(params: Omit<PageParams, 'page'> = {}): AsyncGenerator<IngestKey, void, undefined> {
      return walkPages((page) => fetchPage(http, ingestKeyResource, PATH, { ...params, page }), (key) => key.id);
    },

    async get(id: number, call: RequestOptions = {}): Promise<IngestKey> {
      return one(await http.request('GET', path(id), call));
    },

    async create(fields: NewIngestKey, call: RequestOptions = {}): Promise<IngestKey> {
      return one(await http.request('POST', PATH, { ...call, body: { ingest_key: fields } }));
    },

    /** Answers nothing (204); `get` reads the changed key. */
    async update(id: number, changes: IngestKeyChanges, call: RequestOptions = {}): Promise<void> {
      await http.request('PUT', path(id), { ...call, body: { ingest_key: changes } });
    },

    /** Revokes the key: every process refuses it from now on. */
    async revoke(id: number, call: RequestOptions = {}): Promise<void> {
      await http.request('DELETE', path(id), call);
    },
  };
}
