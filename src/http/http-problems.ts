import { ClientError } from '../shared/problems.js';

/** Errors only the HTTP layer can detect: how the request was made, not what it asked for. */

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
  constructor(limitBytes: number) {
    super(`Request body is larger than the limit of ${limitBytes} bytes`);
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

/** The code a fault of the service (a 500) is logged with. */
export const INTERNAL_ERROR_CODE = 'CMI_ERR_INTERNAL';
