import type { Readable } from 'node:stream';
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { MalformedRequest, problemOf, SentryRefusal, ServiceUnavailable } from '../shared/problems.js';
import type { IngestKey } from './ingest-key.js';
import { keyFromAuthHeader, keyFromDsn, MISSING_KEY } from './sentry-auth.js';
import { decodeSentryBody, decodeSentryHead, readLimited, SENTRY_LIMITS } from './sentry-body.js';
import { envelopeHeaderOf, parseEnvelope } from './sentry-envelope.js';
import type { SentryIngestion } from './sentry-ingestion.js';

type WithId = { Params: { id: string } };

const ENVELOPE = '/api/:id/envelope/';
const STORE = '/api/:id/store/';
const ANSWER = { 200: { sentry: true } } as const;
/** No cmi credentials: the ingest key is checked by the handler (the gate still takes the request's context). */
const PUBLIC = { config: { public: true } };

export const SENTRY_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: ENVELOPE, summary: 'Sentry envelopes: event items recorded as infrastructure errors, other items accepted and dropped', who: 'ingest key', formats: false, answers: ANSWER },
  { method: 'POST', path: STORE, summary: 'One Sentry event, recorded as an infrastructure error', who: 'ingest key', formats: false, answers: ANSWER },
  { method: 'OPTIONS', path: ENVELOPE, summary: 'CORS preflight for the origins the key allows', who: 'ingest key', formats: false, answers: ANSWER },
  { method: 'OPTIONS', path: STORE, summary: 'CORS preflight for the origins the key allows', who: 'ingest key', formats: false, answers: ANSWER },
];

export const ORIGIN_REFUSED = 'The ingest key does not allow this origin';
const ALLOWED_HEADERS = 'content-type, content-encoding, x-sentry-auth, authorization, sentry-trace, baggage';

export interface SentryRoutesOptions {
  ingestion: SentryIngestion;
}

/** The key a request names in X-Sentry-Auth or the query (`sentry_key`), if any. */
function givenKey(request: FastifyRequest): string | undefined {
  const header = keyFromAuthHeader(request.headers['x-sentry-auth']);
  if (header !== undefined) return header;
  const query = (request.query as Record<string, unknown>)['sentry_key'];
  return typeof query === 'string' ? query : undefined;
}

/** Whether the key lets a browser at `origin` send; no Origin (a server's SDK) always may. */
function originAllowed(key: IngestKey, origin: string | undefined): boolean {
  if (origin === undefined) return true;
  const allowed = key.allowed_origins.split(' ');
  return allowed.includes('*') || allowed.includes(origin.toLowerCase());
}

function allowOrigin(reply: FastifyReply, key: IngestKey, origin: string | undefined): void {
  if (origin === undefined) return;
  if (!originAllowed(key, origin)) throw new SentryRefusal(403, ORIGIN_REFUSED);
  reply.header('access-control-allow-origin', origin).header('vary', 'Origin').header('access-control-expose-headers', 'x-sentry-rate-limits, retry-after');
}

/**
 * The Sentry ingestion endpoints (docs/sentry.md), in a context of their own: any Content-Type (or
 * none) is taken as a stream and read here with the Sentry limits; their errors are Sentry's
 * `{"detail": "..."}`; a fault of cmi goes on to the application's error handler (500, recorded).
 */
export const sentryRoutes: FastifyPluginCallback<SentryRoutesOptions> = (app, { ingestion }, done) => {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, payload, parsed) => parsed(null, payload));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = problemOf(error)
      ?? (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? new MalformedRequest(400, 'Unreadable Content-Type') : undefined)
      ?? (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? new MalformedRequest(error.statusCode, error.message) : undefined);
    if (problem === undefined || (problem.status >= 500 && !(problem instanceof ServiceUnavailable))) throw error;
    request.log.debug({ code: problem.code, status: problem.status, requestId: request.id }, problem.message);
    return reply.code(problem.status).headers(problem.headers).type('application/json; charset=utf-8').send(JSON.stringify({ detail: problem.message }));
  });

  const answer = (reply: FastifyReply, id: string | undefined) =>
    reply.code(200).type('application/json; charset=utf-8').send(id === undefined ? '{}' : `{"id":"${id}"}`);

  /** The body as sent, at most SENTRY_LIMITS.bodyBytes: read, not decoded. */
  const rawBody = async (request: FastifyRequest): Promise<Buffer> => {
    const stream = request.body as Readable | undefined;
    return stream === undefined ? Buffer.alloc(0) : readLimited(stream, SENTRY_LIMITS.bodyBytes);
  };
  const body = async (request: FastifyRequest): Promise<Buffer> => decodeSentryBody(await rawBody(request), request.headers['content-encoding']);

  /** The key named before the body is read, authenticated and admitted; undefined when none is named there. */
  const early = async (request: FastifyRequest<WithId>, reply: FastifyReply): Promise<IngestKey | undefined> => {
    const given = givenKey(request);
    if (given === undefined) return undefined;
    const key = await ingestion.authenticate(request.params.id, given);
    allowOrigin(reply, key, request.headers.origin);
    ingestion.admit(key);
    return key;
  };

  app.post<WithId>(ENVELOPE, PUBLIC, async (request, reply) => {
    let key = await early(request, reply);
    const raw = await rawBody(request);
    const encoding = request.headers['content-encoding'];
    if (key === undefined) {
      // No key before the body: the envelope header's DSN, from its first line, decoded alone (a few
      // KiB at most), before anything else of the body is inflated or parsed (docs/sentry.md#limits).
      const head = await decodeSentryHead(raw, encoding, SENTRY_LIMITS.headerBytes + 1);
      const dsn = head === undefined ? undefined : keyFromDsn(envelopeHeaderOf(head).dsn);
      if (dsn === undefined) throw new SentryRefusal(401, MISSING_KEY);
      if (dsn.project !== request.params.id) throw new SentryRefusal(401, 'The DSN of the envelope names another project');
      key = await ingestion.authenticate(request.params.id, dsn.key);
      allowOrigin(reply, key, request.headers.origin);
      ingestion.admit(key);
    }
    return answer(reply, await ingestion.envelope(key, parseEnvelope(await decodeSentryBody(raw, encoding))));
  });

  app.post<WithId>(STORE, PUBLIC, async (request, reply) => {
    const key = await early(request, reply);
    if (key === undefined) throw new SentryRefusal(401, MISSING_KEY);
    return answer(reply, await ingestion.store(key, await body(request)));
  });

  const preflight = async (request: FastifyRequest<WithId>, reply: FastifyReply) => {
    const given = givenKey(request);
    if (given === undefined) throw new SentryRefusal(401, MISSING_KEY);
    const key = await ingestion.authenticate(request.params.id, given);
    const origin = request.headers.origin;
    if (origin === undefined || !originAllowed(key, origin)) throw new SentryRefusal(403, ORIGIN_REFUSED);
    return reply.code(200)
      .header('access-control-allow-origin', origin)
      .header('vary', 'Origin')
      .header('access-control-allow-methods', 'POST')
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', '3600')
      .send();
  };
  app.options<WithId>(ENVELOPE, PUBLIC, preflight);
  app.options<WithId>(STORE, PUBLIC, preflight);
  done();
};
