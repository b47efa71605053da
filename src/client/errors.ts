/**
 * What a failed call throws (docs/client.md#errors): `CmiApiError` and a subclass per status family for an
 * answer the server gave; `CmiConnectionError` (and `CmiTimeoutError`) when no answer came; `CmiAbortError`
 * when the caller's own signal ended the call; `CmiProtocolError` for an answer the client cannot read.
 */
export class CmiError extends Error {
  override name = 'CmiError';
}

/** The server answered with a status of 400 or more. */
export class CmiApiError extends CmiError {
  override name = 'CmiApiError';
  /** The HTTP status. */
  readonly status: number;
  /** Field errors (`{"login": ["has already been taken"]}`); `base` for the record as a whole. XML bodies carry full messages only, under `base`. */
  readonly errors: Readonly<Record<string, readonly string[]>>;
  /** The server's `X-Request-Id`, to find the request in its log. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (`Retry-After`), when it sent one. */
  readonly retryAfter: number | undefined;
  /** The answer's headers (not enumerable, so a logged error stays short). */
  declare readonly headers: Headers;

  constructor(status: number, errors: Record<string, string[]>, headers: Headers, retryAfter: number | undefined) {
    const messages = Object.entries(errors).flatMap(([field, list]) => list.map((m) => (field === 'base' ? m : `${field} ${m}`)));
    super(`${status}: ${messages.length > 0 ? messages.join('; ') : 'no message'}`);
    this.status = status;
    this.errors = errors;
    Object.defineProperty(this, 'headers', { value: headers, enumerable: false });
    this.requestId = headers.get('x-request-id') ?? undefined;
    this.retryAfter = retryAfter;
  }
}

/** 400, 405, 406, 409, 413 and other 4xx without a class of their own. */
export class CmiBadRequestError extends CmiApiError { override name = 'CmiBadRequestError'; }
/** 401: no or wrong credentials. */
export class CmiAuthenticationError extends CmiApiError { override name = 'CmiAuthenticationError'; }
/** 403: authenticated, not allowed. */
export class CmiPermissionError extends CmiApiError { override name = 'CmiPermissionError'; }
/** 404: no such path or record. */
export class CmiNotFoundError extends CmiApiError { override name = 'CmiNotFoundError'; }
/** 422: the parameters or body were refused; `errors` names the fields. */
export class CmiValidationError extends CmiApiError { override name = 'CmiValidationError'; }
/** 429: too many requests or failed logins; `retryAfter` says how long to wait. */
export class CmiRateLimitError extends CmiApiError { override name = 'CmiRateLimitError'; }
/** 5xx: a fault of the server; `requestId` names it in the server's log. */
export class CmiServerError extends CmiApiError { override name = 'CmiServerError'; }

/** The error class for a status. */
export function apiErrorClass(status: number): typeof CmiApiError {
  if (status === 401) return CmiAuthenticationError;
  if (status === 403) return CmiPermissionError;
  if (status === 404) return CmiNotFoundError;
  if (status === 422) return CmiValidationError;
  if (status === 429) return CmiRateLimitError;
  if (status >= 500) return CmiServerError;
  return CmiBadRequestError;
}

/** No answer: the connection was refused, reset or closed before a whole answer came. */
export class CmiConnectionError extends CmiError {
  override name = 'CmiConnectionError';
}

/** No answer within the `timeout` of each attempt (after the retries it allows). */
export class CmiTimeoutError extends CmiConnectionError {
  override name = 'CmiTimeoutError';
}

/** The caller's `signal` aborted the call; never retried. */
export class CmiAbortError extends CmiError {
  override name = 'CmiAbortError';
}

/** An answer the client cannot read: not JSON/XML, a DOCTYPE or entity, a field of the wrong type. */
export class CmiProtocolError extends CmiError {
  override name = 'CmiProtocolError';
}
