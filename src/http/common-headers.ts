import { STATUS_CODES } from 'node:http';

/** `Status` header values by status code, made once per code rather than once per response. */
const STATUS_LINES: Array<string | undefined> = [];

/** The `Status` header of `status`: `200 OK` (docs/api.md#response-headers). */
export function statusLine(status: number): string {
  return (STATUS_LINES[status] ??= `${status} ${STATUS_CODES[status] ?? ''}`.trimEnd());
}

/** The decimal point and the zeros in front of a microseconds figure of 0-999,999, by its digit count. */
const FRACTION_PREFIX = ['', '.00000', '.0000', '.000', '.00', '.0', '.'];

/** `millis` as seconds with six decimals, rounded to the microsecond (as `(millis / 1000).toFixed(6)` writes them, but for a value halfway between two). */
export function secondsText(millis: number): string {
  const micros = Math.round(millis * 1000);
  const fraction = micros % 1_000_000;
  const digits = fraction < 10 ? 1 : fraction < 100 ? 2 : fraction < 1000 ? 3 : fraction < 10_000 ? 4 : fraction < 100_000 ? 5 : 6;
  return `${(micros - fraction) / 1_000_000}${FRACTION_PREFIX[digits] as string}${fraction}`;
}

/** X-Runtime: the seconds since `startedAt` (performance.now()), six decimals (toFixed costs about a microsecond a response; secondsText a quarter of it). */
export const runtimeSince = (startedAt: number): string => secondsText(performance.now() - startedAt);

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
