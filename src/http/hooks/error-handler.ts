import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { systemClock } from '../../shared/clock.js';
import { type ClientError, INTERNAL_ERROR_CODE, MalformedRequest, NotFound, PayloadTooLarge, problemOf, ServiceUnavailable, UnsupportedMediaType } from '../../shared/problems.js';
import { type FaultCatcher, faultLogLimiter } from '../../shared/faults.js';
import { sendPayload } from '../respond.js';
import { startRequest } from './request-context.js';
import { setCommonHeaders } from './response-headers.js';

const SUCCESS_ONLY_HEADERS = ['x-total', 'x-limit', 'x-page', 'link', 'location', 'etag'];

/** Fastify's own request errors (body limits, media types, bad URLs) as client errors. */
function clientErrorOf(error: FastifyError, bodyLimit: number): ClientError | undefined {
  const problem = problemOf(error);
  if (problem) return problem;
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PayloadTooLarge(bodyLimit);
  if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new UnsupportedMediaType();
  // A request fastify or Node refused (a bad body, a client that hung up mid-upload): the client's doing.
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new MalformedRequest(status, error.message);
  return undefined;
}

/**
 * Renders every error in the requested format. A client error gets its status and messages; anything
 * else is a fault of the service: logged (at most once a second per fault), captured as an
 * infrastructure error (every time; written within a second: tracker/fault-capture.ts), and answered
 * 500 with nothing but the request id.
 */
export function registerErrorHandler(app: FastifyInstance, faults: FaultCatcher | undefined, bodyLimit: number): void {
  // A sick database is the operator's business: warned at any log level, once a second per reason.
  const mayWarn = faultLogLimiter(systemClock);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // An error before any hook ran is still answered in the format the request asked for (docs/api.md#formats).
    if (request.startedAt === 0) startRequest(request);
    // Headers a handler set before it failed (list headers, Location) describe an answer not given.
    for (const header of SUCCESS_ONLY_HEADERS) reply.removeHeader(header);
    const clientError = clientErrorOf(error, bodyLimit);
    if (clientError instanceof ServiceUnavailable) {
      // An unreachable database is told as the start-up tells it: where, why, what to check.
      const line = clientError.logLine;
      const warning = mayWarn(line);
      if (warning.log) {
        const repeated = warning.repeated > 0 ? { repeated: warning.repeated } : {};
        request.log.warn({ code: clientError.code, status: clientError.status, requestId: request.id, ...repeated }, line);
      }
    } else if (clientError) {
      request.log.debug({ code: clientError.code, status: clientError.status, requestId: request.id }, clientError.message);
    }
    if (clientError) {
      reply.code(clientError.status).headers(clientError.headers);
      return sendPayload(reply, request.format, { kind: 'errors', messages: clientError.messages });
    }
    // One line a second per fault at most, the next one saying how many it stood for (docs/operations.md#log-storms).
    const context = { request_id: request.id, method: request.method, route: request.routeOptions.url ?? '(no route)', component: 'request' };
    // Uncaptured (CMI_FAULT_INJECTION=uncaptured, benchmarks only): logged as often, recorded never.
    const fault = faults?.capture(error, context) ?? { fingerprint: undefined, ...mayWarn(error.message) };
    if (fault.log) {
      const repeated = fault.repeated > 0 ? { repeated: fault.repeated } : {};
      request.log.error({ code: INTERNAL_ERROR_CODE, err: error, requestId: request.id, fingerprint: fault.fingerprint, ...repeated }, 'fault');
    }
    reply.code(500);
    return sendPayload(reply, request.format, {
      kind: 'errors',
      messages: { base: [`Internal server error (request ${request.id})`] },
    });
  });
}

/**
 * 404 for a request the router refused before any hook ran (fastify's frameworkErrors), with the
 * headers every response carries.
 */
export function answerUnroutable(request: FastifyRequest, reply: FastifyReply): void {
  startRequest(request);
  reply.code(404);
  // Fastify runs no hooks for these requests, so the common headers are set here.
  setCommonHeaders(request, reply);
  sendPayload(reply, request.format, { kind: 'errors', messages: new NotFound().messages });
}
