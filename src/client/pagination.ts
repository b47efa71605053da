import type { ResourceDefinition } from '../http/render/resource-definition.js';
import { CmiProtocolError } from './errors.js';
import { decodeRecord, type RecordOf, unwrap } from './records.js';
import type { Answer, Query, RequestOptions, Transport } from './transport.js';

/** One page of a list (docs/client.md#pagination). */
export interface Page<T> {
  items: T[];
  /** All the items the list holds (`X-Total`). */
  total: number;
  /** This page's number, from 1 (`X-Page`). */
  page: number;
  /** Items a page (`X-Limit`, the effective `per_page`). */
  limit: number;
  /** Whether a page follows: by `X-Total`, else by a `Link` rel="next", else by whether this page was full. */
  hasMore: boolean;
}

export interface PageParams extends RequestOptions {
  page?: number;
  perPage?: number;
}

const header = (answer: Answer, name: string): number | undefined => {
  const value = answer.headers.get(name);
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
};

/** A list answer's records, each read against the definition. */
export function decodeList<R extends ResourceDefinition>(resource: R, answer: Answer, format: 'json' | 'xml'): Array<RecordOf<R>> {
  if (!Array.isArray(answer.body)) throw new CmiProtocolError(`expected a list of ${resource.plural}, got ${JSON.stringify(answer.body)}`);
  return answer.body.map((item) => decodeRecord(resource, format === 'json' ? unwrap(resource, item) : item, format));
}

/** GET a list page; a server without `X-Total`/`X-Limit` (an OnApp panel on some lists) is read from what came. */
export async function fetchPage<R extends ResourceDefinition>(
  http: Transport,
  resource: R,
  path: string,
  params: PageParams & { query?: Query },
): Promise<Page<RecordOf<R>>> {
  const { page, perPage, query, ...call } = params;
  const answer = await http.request('GET', path, { ...call, query: { ...query, page, per_page: perPage } });
  const items = decodeList(resource, answer, http.format);
  const limit = header(answer, 'x-limit') ?? perPage ?? items.length;
  const current = header(answer, 'x-page') ?? page ?? 1;
  const announced = header(answer, 'x-total');
  const total = announced ?? (current - 1) * limit + items.length;
  const link = answer.headers.get('link');
  const hasMore = announced !== undefined ? current * limit < announced : link !== null ? /rel="?next"?/.test(link) : items.length > 0 && items.length >= limit;
  return { items, total, page: current, limit, hasMore };
}

/**
 * Every item of a list, page after page, each once (docs/client.md#pagination). Pages are read by
 * number; `keyOf` names an item so one seen on an earlier page (records added before it shifted it
 * along) is not yielded twice, and when `X-Total` falls (records removed before the walk's place shifted
 * the rest back) the walk steps back as many pages as could have been skipped. It ends on the last page
 * as the latest answer tells it (`hasMore`), so records added mid-walk at the end are reached.
 *
 * A server that lies cannot hold it forever: the next page is the one asked for plus one (never the
 * server's `X-Page`), a step back needs a new item since the last one, and a page of items all seen
 * before ends the walk unless a step back explains it (X-Total or Link announcing pages that repeat).
 */
export async function* walkPages<T>(
  fetch: (page: number) => Promise<Page<T>>,
  keyOf?: (item: T) => unknown,
): AsyncGenerator<T, void, undefined> {
  const seen = new Set<unknown>();
  let page = 1;
  let lastTotal: number | undefined;
  // Pages that may repeat what was seen: those a step back re-reads.
  let repeatsAllowed = 0;
  let newSinceStepBack = true;
  for (;;) {
    const current = await fetch(page);
    if (lastTotal !== undefined && current.total < lastTotal && page > 1 && newSinceStepBack) {
      const back = Math.min(page - 1, Math.ceil((lastTotal - current.total) / Math.max(current.limit, 1)));
      lastTotal = current.total;
      page -= back;
      repeatsAllowed = back;
      newSinceStepBack = false;
      continue;
    }
    lastTotal = current.total;
    let fresh = 0;
    for (const item of current.items) {
      if (keyOf !== undefined) {
        const key = keyOf(item);
        if (seen.has(key)) continue;
        seen.add(key);
      }
      fresh += 1;
      yield item;
    }
    if (current.items.length === 0 || !current.hasMore) return;
    if (fresh > 0) newSinceStepBack = true;
    else if (repeatsAllowed-- <= 0) return;
    page += 1;
  }
}
