/**
 * Errors a client caused. Each carries its HTTP status and the messages to show, keyed by field
 * ("base" for the request as a whole). Anything thrown that is not one of these is a fault of the
 * service: 500, and recorded as an infrastructure error.
 */
export type ErrorMessages = Record<string, string[]>;

export abstract class ClientError extends Error {
  abstract readonly status: number;
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
  constructor() {
    super('Access denied');
    this.headers['WWW-Authenticate'] = 'Basic realm="cmi"';
  }
}

export class Forbidden extends ClientError {
  readonly status = 403;
  constructor(message = 'You are not authorized to perform this action') {
    super(message);
  }
}

export class NotFound extends ClientError {
  readonly status = 404;
  constructor() {
    super('Resource not found');
  }
}

export class NotAcceptable extends ClientError {
  readonly status = 406;
  constructor() {
    super('Not acceptable: use the .json or .xml extension');
  }
}

export class PayloadTooLarge extends ClientError {
  readonly status = 413;
  constructor(limitBytes: number) {
    super(`Request body is larger than the limit of ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaType extends ClientError {
  readonly status = 415;
  constructor() {
    super('Unsupported Content-Type: send application/json or application/xml');
  }
}

export class Unprocessable extends ClientError {
  readonly status = 422;
}

export class TooManyRequests extends ClientError {
  readonly status = 429;
  constructor(retryAfterSeconds: number) {
    super('Too many requests, try again later');
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}

/** Collects field errors so a validator can name every bad field at once. */
export class FieldErrors {
  private readonly messages: ErrorMessages = {};

  add(field: string, message: string): void {
    (this.messages[field] ??= []).push(message);
  }

  get empty(): boolean {
    return Object.keys(this.messages).length === 0;
  }

  throwIfAny(): void {
    if (!this.empty) throw new Unprocessable(this.messages);
  }
}

/** A client error the HTTP layer itself detected (a malformed request), with its own status. */
export class MalformedRequest extends ClientError {
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
