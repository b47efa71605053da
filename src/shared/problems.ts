import { type ConnectionFailure, connectionFailureLine } from '../db/dialects/connection/connection-failure.js';
import { DatabaseUnavailable, type DatabaseUnavailableReason } from '../db/dialects/connection/database-unavailable.js';

/**
 * Errors answered with their own status: a client's mistake (a broken rule of the domain), or a
 * database that cannot serve now (503). Each carries a stable code (logged with it;
 * match codes, never message text), its HTTP status, and the messages to show, keyed by field
 * ("base" for the request as a whole). The errors only the HTTP layer can detect are
 * here too, after those of the domain. Anything thrown that is neither is a fault of the service: 500, and recorded
 * as an infrastructure error. docs/api.md#errors lists every code.
 */
export type ErrorMessages = Record<string, string[]>;

export abstract class ClientError extends Error {
  abstract readonly status: number;
  abstract readonly code: string;
  readonly messages: ErrorMessages;
  /** Extra response headers, e.g. WWW-Authenticate or Retry-After. */
  readonly headers: Record<string, string> = {};

  constructor(messages: ErrorMessages | string) {
    const normalized = typeof messages === 'string' ? { base: [messages] } : messages;
    super(Object.values(normalized).flat().join('; '));
    this.messages = normalized;
  }
}

export class Unauthorized extends ClientError {
  readonly status = 401;
  readonly code = 'CMI_ERR_UNAUTHORIZED';
  /** `message`: the reason, where telling it helps the owner more than a guesser (a second factor: users/authentication.ts). */
  constructor(message = 'Access denied') {
    super(message);
    this.headers['WWW-Authenticate'] = 'Basic realm="cmi"';
  }
}

export const FORBIDDEN_MESSAGE = 'You are not authorized to perform this action';

export class Forbidden extends ClientError {
  readonly status = 403;
  readonly code = 'CMI_ERR_FORBIDDEN';
  constructor(message = FORBIDDEN_MESSAGE) {
    super(message);
  }

  /**
   * A 403 for a missing permission, naming it in the message (docs/api.md#errors):
   * `You are not authorized to perform this action (needs users.read)`; permissions any one of which
   * would do are joined by `or`.
   */
  static needs(...permissions: string[]): Forbidden {
    return new Forbidden(`${FORBIDDEN_MESSAGE} (needs ${permissions.join(' or ')})`);
  }
}

export class NotFound extends ClientError {
  readonly status = 404;
  readonly code = 'CMI_ERR_NOT_FOUND';
  constructor() {
    super('Resource not found');
  }
}

export class Unprocessable extends ClientError {
  readonly status = 422;
  readonly code = 'CMI_ERR_UNPROCESSABLE';
}

export class TooManyRequests extends ClientError {
  readonly status = 429;
  readonly code = 'CMI_ERR_TOO_MANY_REQUESTS';
  /** `messages`: what is refused and until when, where that is worth saying (the lockout: users/lockout.ts). */
  constructor(retryAfterSeconds: number, messages: ErrorMessages | string = 'Too many requests, try again later') {
    super(messages);
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}

/** A receiver cmi had to deliver to did not take it (a report: docs/reporting-and-alerts.md#reporting-an-error). */
export class BadGateway extends ClientError {
  readonly status = 502;
  readonly code = 'CMI_ERR_BAD_GATEWAY';
}

/**
 * cmi cannot serve now: the database (db/dialects/connection/database-unavailable.ts), the session key not yet read, or
 * the write queue full. 503 with Retry-After, never a 500, and not recorded as a fault.
 */
export type UnavailableReason = DatabaseUnavailableReason | 'the session key cannot be read from the database' | 'the write queue is full';

export class ServiceUnavailable extends ClientError {
  readonly status = 503;
  readonly code = 'CMI_ERR_SERVICE_UNAVAILABLE';
  constructor(
    readonly reason: UnavailableReason,
    retryAfterSeconds: number,
    /** Where the database is and why it cannot be reached: logged, never answered (docs/operations.md#when-the-database-cannot-be-reached). */
    readonly connectionFailure?: ConnectionFailure,
  ) {
    super(`Service unavailable: ${reason}; try again later`);
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }

  /** What the log says: where the database is and why it cannot be reached, else the answer's message. */
  get logLine(): string {
    return this.connectionFailure === undefined ? this.message : connectionFailureLine(this.connectionFailure);
  }
}

// Errors only the HTTP layer can detect: how the request was made, not what it asked for.

export class NotAcceptable extends ClientError {
  readonly status = 406;
  readonly code = 'CMI_ERR_NOT_ACCEPTABLE';
  constructor() {
    super('Not acceptable: use the .json or .xml extension');
  }
}

export class PayloadTooLarge extends ClientError {
  readonly status = 413;
  readonly code = 'CMI_ERR_PAYLOAD_TOO_LARGE';
  /** `message`: what is too large, where it is not the body (docs/sentry.md#limits). */
  constructor(limitBytes: number, message = `Request body is larger than the limit of ${limitBytes} bytes`) {
    super(message);
  }
}

export class UnsupportedMediaType extends ClientError {
  readonly status = 415;
  readonly code = 'CMI_ERR_UNSUPPORTED_MEDIA_TYPE';
  constructor() {
    super('Unsupported Content-Type: send application/json or application/xml');
  }
}

/** A body in a character set other than UTF-8 (docs/limits.md#request-bodies). */
export class UnsupportedCharset extends ClientError {
  readonly status = 415;
  readonly code = 'CMI_ERR_UNSUPPORTED_CHARSET';
  constructor(charset: string) {
    super(`Unsupported charset ${charset}: send the body in UTF-8`);
  }
}

/** Authorization or Cookie given more than once: which one counts would be a guess (docs/limits.md#authentication). */
export class DuplicateCredentials extends ClientError {
  readonly status = 400;
  readonly code = 'CMI_ERR_DUPLICATE_CREDENTIALS';
  constructor(header: string) {
    super(`The ${header} header must be given only once`);
  }
}

/** A request body that stopped arriving for CMI_BODY_TIMEOUT (docs/limits.md#connections). */
export class BodyTimeout extends ClientError {
  readonly status = 408;
  readonly code = 'CMI_ERR_BODY_TIMEOUT';
  constructor(timeoutMs: number) {
    super(`Request body stalled: nothing arrived for ${timeoutMs} ms`);
  }
}

/** A request fastify or Node refused (a bad body, a client that hung up mid-upload), with its status. */
export class MalformedRequest extends ClientError {
  readonly code = 'CMI_ERR_MALFORMED_REQUEST';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** A Content-Encoding cmi does not decode (br, compress ...) on the Sentry endpoints (docs/sentry.md#limits). */
export class UnsupportedEncoding extends ClientError {
  readonly status = 415;
  readonly code = 'CMI_ERR_UNSUPPORTED_ENCODING';
  constructor(encoding: string) {
    super(`Unsupported Content-Encoding ${encoding}: send identity, gzip or deflate`);
  }
}

// The Sentry protocol's refusals (docs/sentry.md#answers), answered as `{"detail": "..."}`.

/** No ingest key, a wrong, revoked or disabled one, or an origin the key does not allow: 401 or 403. */
export class SentryRefusal extends ClientError {
  readonly code = 'CMI_ERR_SENTRY_REFUSED';
  constructor(readonly status: 401 | 403 = 401, detail = 'Invalid ingest key for this project') {
    super(detail);
  }
}

/** Beyond an ingest key's rate limit: 429 with Retry-After and X-Sentry-Rate-Limits, which the SDKs honour. */
export class SentryRateLimited extends ClientError {
  readonly status = 429;
  readonly code = 'CMI_ERR_SENTRY_RATE_LIMITED';
  constructor(retryAfterSeconds: number) {
    super('Rate limit of the ingest key exceeded, try again later');
    this.headers['Retry-After'] = String(retryAfterSeconds);
    this.headers['X-Sentry-Rate-Limits'] = `${retryAfterSeconds}::key`;
  }
}

/** The code a fault of the service (a 500) is logged with. */
export const INTERNAL_ERROR_CODE = 'CMI_ERR_INTERNAL';

/** The problem `error` is when it is one the client is answered with (a database unavailable included). */
export function problemOf(error: unknown): ClientError | undefined {
  if (error instanceof ClientError) return error;
  if (error instanceof DatabaseUnavailable) return new ServiceUnavailable(error.reason, error.retryAfterSeconds, error.connectionFailure);
  return undefined;
}

/** Collects field errors so a validator can name every bad field at once. */
export class FieldErrors {
  private readonly messages: ErrorMessages = {};

  add(field: string, message: string): void {
    (this.messages[field] ??= []).push(message);
  }

  has(field: string): boolean {
    return field in this.messages;
  }

  get empty(): boolean {
    return Object.keys(this.messages).length === 0;
  }

  throwIfAny(): void {
    if (!this.empty) throw new Unprocessable(this.messages);
  }
}
