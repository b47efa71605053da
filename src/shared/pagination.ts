import type { PageCacheMeter } from './page-cache.js';
import { FieldErrors } from './problems.js';

type Style = 'path' | 'query';

export interface Pagination {
  page: number;
  perPage: number;
  offset: number;
  /** How the request gave each parameter, so Link headers are written the same way. */
  pageStyle: Style | undefined;
  perPageStyle: Style | undefined;
}

const MAX_PAGE = 2_147_483_647;

interface Given {
  value: number | undefined;
  style: Style | undefined;
}

const ABSENT: Given = { value: undefined, style: undefined };

/** One parameter from wherever it was given; a problem with it goes into `errors`. */
function readParameter(
  name: string,
  max: number,
  pathPairs: ReadonlyArray<[string, string]>,
  query: Readonly<Record<string, string | string[] | undefined>>,
  errors: FieldErrors,
): Given {
  let raw: string | undefined;
  let style: Style | undefined;
  let times = 0;
  for (const [segment, value] of pathPairs) {
    if (segment !== name) continue;
    raw = value;
    style = 'path';
    times += 1;
  }
  const fromQuery = query[name];
  if (typeof fromQuery === 'string' || (fromQuery !== undefined && fromQuery.length > 0)) {
    raw = typeof fromQuery === 'string' ? fromQuery : fromQuery[0];
    style = 'query';
    times += typeof fromQuery === 'string' ? 1 : fromQuery.length;
  }
  if (times === 0 || raw === undefined) return ABSENT;
  if (times > 1) {
    errors.add(name, 'must be given only once');
    return ABSENT;
  }
  const value = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) {
    errors.add(name, `must be an integer from 1 to ${max}`);
    return { value: undefined, style };
  }
  return { value, style };
}

/** How a feature serves its lists: page sizes (docs/api.md#pagination) and what its rendered pages may cost. */
export interface ListSettings {
  defaultPerPage: number;
  maxPerPage: number;
  /** The most a feature's cache of rendered pages may cost, in bytes (0: no page is kept). */
  pageCacheBytes: number;
  /** Where the caches of rendered pages report what they hold (with the metrics on). */
  pageCacheMeter?: PageCacheMeter;
}

/**
 * Reads `page` and `per_page` from path segments and the query string (docs/api.md#pagination), in any mix.
 * A parameter given twice, or a value out of range or not an integer, is a 422 naming the field.
 */
export function parsePagination(
  pathPairs: ReadonlyArray<[string, string]>,
  query: Readonly<Record<string, string | string[] | undefined>>,
  limits: { defaultPerPage: number; maxPerPage: number },
): Pagination {
  const errors = new FieldErrors();
  const page = readParameter('page', MAX_PAGE, pathPairs, query, errors);
  const perPage = readParameter('per_page', limits.maxPerPage, pathPairs, query, errors);
  errors.throwIfAny();
  const pageNumber = page.value ?? 1;
  const perPageNumber = perPage.value ?? limits.defaultPerPage;
  return {
    page: pageNumber,
    perPage: perPageNumber,
    offset: (pageNumber - 1) * perPageNumber,
    pageStyle: page.style,
    perPageStyle: perPage.style,
  };
}

/**
 * `X-Total`, `X-Limit`, `X-Page` and an RFC 8288 `Link` with first, prev, next and last. Links keep
 * the request's other query parameters (a list's filters), given in `query`.
 */
export function paginationHeaders(
  pagination: Pagination,
  total: number,
  listPath: string,
  query: Readonly<Record<string, string | string[] | undefined>> = {},
): Record<string, string> {
  const kept = Object.entries(query).flatMap(([name, value]) =>
    name === 'page' || name === 'per_page' || value === undefined ? [] : [value].flat().map((v) => `${encodeURIComponent(name)}=${encodeURIComponent(v)}`));
  const last = Math.max(1, Math.ceil(total / pagination.perPage));
  const pageStyle = pagination.pageStyle ?? pagination.perPageStyle ?? 'query';

  const href = (page: number): string => {
    const params: Array<[string, number, Style]> = [['page', page, pageStyle]];
    if (pagination.perPageStyle) params.push(['per_page', pagination.perPage, pagination.perPageStyle]);
    const path = params.filter(([, , s]) => s === 'path').map(([n, v]) => `/${n}/${v}`).join('');
    const search = [...kept, ...params.filter(([, , s]) => s === 'query').map(([n, v]) => `${n}=${v}`)].join('&');
    return `${listPath}${path}${search ? `?${search}` : ''}`;
  };

  const links = [`<${href(1)}>; rel="first"`];
  if (pagination.page > 1) links.push(`<${href(Math.min(pagination.page - 1, last))}>; rel="prev"`);
  if (pagination.page < last) links.push(`<${href(pagination.page + 1)}>; rel="next"`);
  links.push(`<${href(last)}>; rel="last"`);

  return {
    'x-total': String(total),
    'x-limit': String(pagination.perPage),
    'x-page': String(pagination.page),
    link: links.join(', '),
  };
}
