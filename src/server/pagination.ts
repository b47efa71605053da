import { FieldErrors } from '../domain/errors.js';

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

/**
 * Reads `page` and `per_page` from path segments and the query string (spec 4.3), in any mix.
 * A parameter given twice, or a value out of range or not an integer, is a 422 naming the field.
 */
export function parsePagination(
  pathPairs: ReadonlyArray<[string, string]>,
  query: Readonly<Record<string, string | string[] | undefined>>,
  limits: { defaultPerPage: number; maxPerPage: number },
): Pagination {
  const errors = new FieldErrors();

  function read(name: string, max: number, message: string): { value: number | undefined; style: Style | undefined } {
    const given: Array<{ raw: string; style: Style }> = [];
    for (const [segment, raw] of pathPairs) if (segment === name) given.push({ raw, style: 'path' });
    const fromQuery = query[name];
    for (const raw of fromQuery === undefined ? [] : [fromQuery].flat()) given.push({ raw, style: 'query' });
    if (given.length === 0) return { value: undefined, style: undefined };
    if (given.length > 1) {
      errors.add(name, 'must be given only once');
      return { value: undefined, style: undefined };
    }
    const { raw, style } = given[0] as { raw: string; style: Style };
    const value = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    if (!(value >= 1 && value <= max)) {
      errors.add(name, message);
      return { value: undefined, style };
    }
    return { value, style };
  }

  const page = read('page', MAX_PAGE, `must be an integer from 1 to ${MAX_PAGE}`);
  const perPage = read('per_page', limits.maxPerPage, `must be an integer from 1 to ${limits.maxPerPage}`);
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

/** `X-Total`, `X-Limit`, `X-Page` and an RFC 8288 `Link` with first, prev, next and last. */
export function paginationHeaders(pagination: Pagination, total: number, listPath: string): Record<string, string> {
  const last = Math.max(1, Math.ceil(total / pagination.perPage));
  const pageStyle = pagination.pageStyle ?? pagination.perPageStyle ?? 'query';

  const href = (page: number): string => {
    const params: Array<[string, number, Style]> = [['page', page, pageStyle]];
    if (pagination.perPageStyle) params.push(['per_page', pagination.perPage, pagination.perPageStyle]);
    const path = params.filter(([, , s]) => s === 'path').map(([n, v]) => `/${n}/${v}`).join('');
    const query = params.filter(([, , s]) => s === 'query').map(([n, v]) => `${n}=${v}`).join('&');
    return `${listPath}${path}${query ? `?${query}` : ''}`;
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

/** What identifies one rendering of a page: the same key, the same bytes while the data stands. */
export function paginationKey(pagination: Pagination, listPath: string): string {
  return `${listPath}|${pagination.page}|${pagination.perPage}|${pagination.pageStyle}|${pagination.perPageStyle}`;
}
