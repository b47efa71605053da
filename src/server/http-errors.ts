import { ClientError } from '../domain/errors.js';

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

/** A request fastify or Node refused (a bad body, a client that hung up mid-upload), with its status. */
export class MalformedRequest extends ClientError {
  readonly code = 'CMI_ERR_MALFORMED_REQUEST';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

/** The code a fault of the service (a 500) is logged with. */
export const INTERNAL_ERROR_CODE = 'CMI_ERR_INTERNAL';
