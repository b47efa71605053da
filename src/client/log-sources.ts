import { logSourceResource } from '../logs/log-source.resource.js';
import { type Page, type PageParams, fetchPage, walkPages } from './pagination.js';
import type { RecordOf } from './records.js';
import type { Transport } from './transport.js';

const PATH = '/sysadmin_tools/infrastructure/sources';

/** A (host, program) pair that has sent log records (docs/log-sources.md#sources-and-silence). */
export type LogSource = RecordOf<typeof logSourceResource>;

/** The list's filters, each an exact match (`program: ''`: the records that named none). */
export interface SourceFilters {
  host?: string;
  program?: string;
  component?: string;
}

/** `client.sources`: every host and program that has sent syslog, journal or OTLP records. */
export function logSourcesApi(http: Transport) {
  const list = (params: PageParams & SourceFilters) => {
    const { host, program, component, ...page } = params;
    return fetchPage(http, logSourceResource, PATH, { ...page, query: { host, program, component } });
  };
  return {
    list(params: PageParams & SourceFilters = {}): Promise<Page<LogSource>> {
      return list(params);
    },
    all(params: Omit<PageParams, 'page'> & SourceFilters = {}): AsyncGenerator<LogSource, void, undefined> {
      return walkPages((page) => list({ ...params, page }), (source) => source.id);
    },
  };
}
