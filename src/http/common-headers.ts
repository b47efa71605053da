import { STATUS_CODES } from 'node:http';

/**
 * The headers every response carries (docs/api.md#response-headers), whichever path answers: the
 * onSend hook, the router's refusals, and requests Node could not parse.
 */
export function commonHeaders(requestId: string, status: number, startedAt: number, cacheControl = 'no-cache'): Record<string, string> {
  return {
    'cache-control': cacheControl,
    'x-request-id': requestId,
    status: `${status} ${STATUS_CODES[status] ?? ''}`.trimEnd(),
    'x-runtime': ((performance.now() - startedAt) / 1000).toFixed(6),
  };
}
