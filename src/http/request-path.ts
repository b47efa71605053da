/**
 * What the path of a request says before routing: the format extension and the pagination segments
 * of docs/api.md#pagination (`/users.json/page/4/per_page/2`). Routes are declared without either: `/users`.
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
  const { listPath, pagination } = splitPagination(path);
  const slash = listPath.lastIndexOf('/');
  const dot = listPath.lastIndexOf('.');
  // An extension is what follows the last dot of the last segment, unless that dot starts it.
  if (dot <= slash + 1) return { routed: listPath + query, extension: undefined, pagination, listPath };
  return { routed: listPath.slice(0, dot) + query, extension: listPath.slice(dot + 1), pagination, listPath };
}

/** Takes trailing `/page/N` and `/per_page/N` pairs off the path (never the first segment). */
function splitPagination(path: string): { listPath: string; pagination: Array<[string, string]> } {
  if (!path.includes('/page/') && !path.includes('/per_page/')) return { listPath: path, pagination: [] };
  const segments = path.split('/');
  let end = segments.length;
  while (end - 2 >= 2 && PAGINATION_SEGMENTS.has(segments[end - 2] as string)) end -= 2;
  const pagination: Array<[string, string]> = [];
  for (let i = end; i < segments.length; i += 2) pagination.push([segments[i] as string, segments[i + 1] as string]);
  return { listPath: segments.slice(0, end).join('/'), pagination };
}
