import type { Server } from 'node:http';
import { BodyTimeout } from '../shared/problems.js';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';

/** What a client may hold (docs/limits.md#connections), from the configuration (config.ts). */
export interface ConnectionLimits {
  requestTimeoutMs: number;
  bodyTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/**
 * What a client may hold and for how long (docs/limits.md#connections): a whole request must arrive
 * within CMI_REQUEST_TIMEOUT, a body may pause at most CMI_BODY_TIMEOUT, a connection whose body was
 * not read when it was answered is closed, and a process holds at most CMI_MAX_CONNECTIONS
 * connections, CMI_MAX_CONNECTIONS_PER_ADDRESS of them from one address.
 */

/** Fastify's server options for the request timeout: Node answers 408 (hooks/client-errors.ts) and closes. */
export function requestTimeoutOptions(config: ConnectionLimits) {
  const timeout = config.requestTimeoutMs;
  return {
    requestTimeout: timeout,
    http: {
      // Headers count against the same limit (Node requires headersTimeout <= requestTimeout).
      headersTimeout: timeout,
      requestTimeout: timeout,
      // How often Node looks for requests past their time: a quarter of it, at most once a second.
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(timeout / 4))),
    },
  };
}

/** Caps the connections of `server`: in all (Node closes the surplus at once) and per client address. */
export function limitConnections(server: Server, config: ConnectionLimits): void {
  server.maxConnections = config.maxConnections;
  const perAddress = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress;
    if (address === undefined) return;
    const held = perAddress.get(address) ?? 0;
    if (held >= config.maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    perAddress.set(address, held + 1);
    socket.once('close', () => {
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left === 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });
}

/**
 * True when the request announced a body that has not all arrived: what follows would be read and
 * dropped after the answer. Not `complete` alone: Node sets it only after the answer's microtasks ran,
 * so a body already received whole is told by the bytes waiting to be read.
 */
export function bodyUnread(request: FastifyRequest): boolean {
  const { raw, headers } = request;
  if (raw.complete) return false;
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length !== '0' && raw.readableLength < Number(length);
}

/**
 * An answer given before the body was read (a 401, 413, 415 ...) closes the connection: what the client
 * still sends would otherwise be read and dropped for as long as it cares to send it.
 */
export function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  if (bodyUnread(request)) reply.header('connection', 'close');
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The body timeout, on the routes that read a body (so a GET pays nothing): the body is read through
 * a stream that fails with a 408 when nothing arrives for CMI_BODY_TIMEOUT.
 */
export function registerBodyTimeout(app: FastifyInstance, config: ConnectionLimits): void {
  const timeoutMs = config.bodyTimeoutMs;
  const watch: preParsingHookHandler = (request, _reply, payload, done) => {
    // A body already here, or a request without a socket (fastify's inject): nothing to wait for.
    if (request.raw.complete || typeof request.raw.setTimeout !== 'function') return done(null, payload);
    const body = new PassThrough();
    payload.pipe(body);
    // The socket's own idle timer: any byte received (or sent) restarts it.
    request.raw.setTimeout(timeoutMs, () => {
      payload.unpipe(body);
      body.destroy(new BodyTimeout(timeoutMs));
    });
    payload.once('end', () => request.raw.setTimeout(0));
    done(null, body);
  };
  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((method) => BODY_METHODS.has(method))) return;
    const own = route.preParsing === undefined ? [] : [route.preParsing].flat();
    route.preParsing = [watch, ...own];
  });
}
