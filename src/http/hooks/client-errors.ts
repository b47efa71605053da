import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import { commonHeaders } from '../common-headers.js';
import type { Socket } from 'node:net';
import { renderJson } from '../render/json.js';
import { CONTENT_TYPES } from '../render/payload.js';

const MESSAGES: Record<number, string> = {
  400: 'Malformed HTTP request',
  408: 'Request timed out',
  431: 'Request header fields too large (16 KiB in all)',
};

function statusOf(code: string | undefined): number {
  if (code === 'HPE_HEADER_OVERFLOW') return 431;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return 408;
  return 400;
}

/**
 * Requests Node cannot even parse (headers over 16 KiB, broken HTTP) never reach fastify; they still get
 * the contract's error body and headers, in JSON since no format could be read.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // An answer already on its way (a request timing out after it was answered): no second one.
  if ((socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  const status = statusOf(error.code);
  const body = renderJson({ kind: 'errors', messages: { base: [MESSAGES[status] as string] } });
  const headers = {
    'content-type': CONTENT_TYPES.json,
    'content-length': String(Buffer.byteLength(body)),
    ...commonHeaders(randomUUID(), status, performance.now()),
    connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${lines.join('')}\r\n${body}`);
}
