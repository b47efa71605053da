/**
 * What the path of a request says before routing: the format extension and the pagination segments
 * of spec 4.3 (`/users.json/page/4/per_page/2`). Routes are declared without either: `/users`.
 */
export interface RequestPath {
  /** The path to route on: no extension, no pagination segments, the query kept. */
  routed: string;
  /** `json`, `xml`, something unsupported, or undefined when the path has none. */
  extension: string | undefined;
  /** `[name, value]` pairs given as path segments, in order. */
  pagination: Array<[string, string]>;
  /** The path as the client wrote it up to the pagination segments (for Link headers). */
  listPath: string;
}

const PAGINATION_SEGMENTS = new Set(['page', 'per_page']);

export function parseRequestPath(url: string): RequestPath {
  const queryStart = url.indexOf('?');
  const path = queryStart === -1 ? url : url.slice(0, queryStart);
  const query = queryStart === -1 ? '' : url.slice(queryStart);
  const segments = path.split('/');

  let end = segments.length;
  while (end - 2 >= 2 && PAGINATION_SEGMENTS.has(segments[end - 2] as string)) end -= 2;
  const pagination: Array<[string, string]> = [];
  for (let i = end; i < segments.length; i += 2) pagination.push([segments[i] as string, segments[i + 1] as string]);

  const base = segments.slice(0, end);
  const listPath = base.join('/');
  const last = base[base.length - 1] ?? '';
  const dot = last.lastIndexOf('.');
  let extension: string | undefined;
  if (dot > 0) {
    extension = last.slice(dot + 1);
    base[base.length - 1] = last.slice(0, dot);
  }
  return { routed: base.join('/') + query, extension, pagination, listPath };
}
