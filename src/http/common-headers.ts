import { STATUS_CODES } from 'node:http';

/** `Status` header values by status code, made once per code rather than once per response. */
const STATUS_LINES: Array<string | undefined> = [];

/** The `Status` header of `status`: `200 OK` (docs/api.md#response-headers). */
export function statusLine(status: number): string {
  return (STATUS_LINES[status] ??= `${status} ${STATUS_CODES[status] ?? ''}`.trimEnd());
}

/** X-Runtime: the seconds since `startedAt` (performance.now()), six decimals. */
export const runtimeSince = (startedAt: number): string => ((performance.now() - startedAt) / 1000).toFixed(6);

/**
 * The headers every response carries (docs/api.md#response-headers), whichever path answers: the
 * onSend hook (which sets the same four, in this order, one by one: http/hooks/response-headers.ts),
 * the router's refusals, and requests Node could not parse.
 */
export function commonHeaders(requestId: string, status: number, startedAt: number, cacheControl = 'no-cache'): Record<string, string> {
  return {
    'cache-control': cacheControl,
    'x-request-id': requestId,
    status: statusLine(status),
    'x-runtime': runtimeSince(startedAt),
  };
}
