/**
 * The route label of every request no route matched, in metrics and the access log: never the raw
 * URL, which may carry anything and would make a series of every path a client makes up
 * (docs/operations.md#metrics).
 */
export const UNMATCHED_ROUTE = 'unmatched';
