import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { FastifyError, FastifyPluginCallback, FastifyReply, FastifyRequest } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { problemOf } from '../shared/problems.js';
import { journalCounters, JournalExportError, journalExportParser, type JournalCounters } from './journal-export.js';
import type { LogRecord } from './log-record.js';

/**
 * Where `systemd-journal-upload --url=<cmi>/api/<key id>/journal/<public key>` posts (it appends
 * `/upload` and sends no header of its own, so the key is in the path: the access log must mask it).
 * docs/log-sources.md#the-endpoints-answers.
 */
export const JOURNAL_UPLOAD_PATH = '/api/:key_id/journal/:public_key/upload';

export const JOURNAL_ROUTES: readonly RouteSpec[] = [
  { method: 'POST', path: JOURNAL_UPLOAD_PATH, summary: 'A journal, as systemd-journal-upload sends it: its entries at err or worse recorded as infrastructure errors', who: 'ingest key', formats: false, answers: { 202: { logSource: 'journald' } } },
];
/** The only Content-Type taken, compared as systemd-journal-remote compares it: exactly. */
export const JOURNAL_MEDIA_TYPE = 'application/vnd.fdo.journal';

/** The answers, word for word those of systemd-journal-remote (src/journal-remote/journal-remote-main.c), each with its `\n`. */
export const JOURNAL_ANSWERS = {
  accepted: 'OK.',
  mediaType: `Content-Type: ${JOURNAL_MEDIA_TYPE} is required.`,
  unauthenticated: 'This URL names no ingest key that may upload a journal.',
  aborted: 'The upload broke off before its end.',
} as const;

type Upload = { Params: { key_id: string; public_key: string } };

/** Who sends, besides the key in the path: its address, and over HTTPS the client certificate it showed, if any. */
export interface JournalPeer {
  address: string | undefined;
  /** SHA-256 of the client certificate's DER, lower-case hex (as a key's `client_certificate_sha256`). */
  certificateSha256: string | undefined;
}

export interface JournalUploadOptions<Key> {
  /** The ingest key the path names, when its public key matches and it may upload a journal (from `peer`); undefined refuses it (401). */
  authenticate(keyId: string, publicKey: string, peer: JournalPeer): Promise<Key | undefined>;
  /**
   * Takes records durably (resolves once they are stored), in the order sent; `lastCursor` is the
   * `__CURSOR` of the last of them. Entries already taken come again (the uploader resends its last
   * entry whenever it starts from a saved cursor): recognising them by `cursor` is the caller's.
   */
  accept(key: Key, records: LogRecord[], lastCursor: string | undefined): Promise<void>;
  /** Where to count (for /metrics); a fresh set when none is given. */
  counters?: JournalCounters;
  /** Records handed to one `accept` at most (default 500). */
  batchRecords?: number;
  /** Bytes of messages and raw text handed to one `accept` at most, roughly (default 4 MiB). */
  batchBytes?: number;
}

/** The cursor of the last record that has one. */
function lastCursorOf(records: readonly LogRecord[]): string | undefined {
  for (let i = records.length - 1; i >= 0; i -= 1) {
    const cursor = records[i]!.cursor;
    if (cursor !== undefined) return cursor;
  }
  return undefined;
}

/** An answer as systemd-journal-remote writes one: text/plain, the sentence and a newline; `close` when the body may be unread. */
function answer(reply: FastifyReply, status: number, text: string, close = false): FastifyReply {
  if (close) reply.header('connection', 'close');
  return reply.code(status).type('text/plain').send(`${text}\n`);
}

/** The sender's address and the client certificate it showed over TLS (none over plain HTTP). */
function peerOf(request: FastifyRequest): JournalPeer {
  const socket = request.raw.socket as Partial<TLSSocket>;
  const certificate = socket.encrypted === true ? socket.getPeerCertificate?.() : undefined;
  const der = certificate !== undefined && certificate.raw !== undefined ? certificate.raw : undefined;
  return {
    address: request.ip,
    certificateSha256: der === undefined ? undefined : createHash('sha256').update(der).digest('hex'),
  };
}

/** Whether the body broke off (the client closed the connection) rather than ending. */
function brokeOff(error: unknown, stream: Readable): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return stream.destroyed || code === 'ECONNRESET' || code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/**
 * The journald endpoint (docs/log-sources.md#journald-systemd-journal-upload), a plugin with a context of its own: the body
 * is read as a stream (never buffered whole) through journalExportParser, records go to `accept` in
 * batches, and the answer is given only once `accept` resolved for everything received: 202 `OK.`;
 * 415 for another Content-Type; 401 for a key refused (the body unread); 400 for a body that is not
 * the export format and 417 for one that ends inside an entry (the entries before it taken); a
 * refusal of `accept` (a problem of src/shared/problems.ts: 503, 429...) with its own status and
 * headers; anything else goes on to the application's error handler.
 */
export function journalUploadRoutes<Key>(options: JournalUploadOptions<Key>): FastifyPluginCallback {
  const counters = options.counters ?? journalCounters();
  const batchRecords = options.batchRecords ?? 500;
  const batchBytes = options.batchBytes ?? 4 * 1024 * 1024;

  return (app, _options, done) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_request, payload, parsed) => parsed(null, payload));

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const problem = problemOf(error);
      if (problem === undefined) throw error;
      request.log.debug({ code: problem.code, status: problem.status, requestId: request.id }, problem.message);
      return answer(reply.headers(problem.headers), problem.status, problem.message);
    });

    app.post<Upload>(JOURNAL_UPLOAD_PATH, { config: { public: true } }, async (request, reply) => {
      if (request.headers['content-type'] !== JOURNAL_MEDIA_TYPE) {
        counters.dropped.unsupported_media_type += 1;
        return answer(reply, 415, JOURNAL_ANSWERS.mediaType, true);
      }
      const key = await options.authenticate(request.params.key_id, request.params.public_key, peerOf(request));
      if (key === undefined) {
        counters.dropped.unauthenticated += 1;
        return answer(reply, 401, JOURNAL_ANSWERS.unauthenticated, true);
      }

      let batch: LogRecord[] = [];
      let bytes = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        const records = batch;
        batch = [];
        bytes = 0;
        await options.accept(key, records, lastCursorOf(records));
      };
      const parser = journalExportParser(async (record) => {
        batch.push(record);
        bytes += record.message.length + record.raw.length;
        if (batch.length >= batchRecords || bytes >= batchBytes) await flush();
      }, { counters });

      // No body at all (Content-Length: 0) is an upload of nothing: 202, as systemd-journal-remote answers.
      const body = request.body as Readable | undefined;
      try {
        if (body !== undefined) for await (const chunk of body) await parser.push(chunk as Buffer);
        parser.end();
      } catch (error) {
        if (error instanceof JournalExportError) {
          // As systemd-journal-remote: the entries before the mistake are taken, the rest refused.
          await flush();
          return answer(reply, error.reason === 'premature_end' ? 417 : 400, error.message, true);
        }
        if (body === undefined || !brokeOff(error, body)) throw error;
        counters.dropped.aborted += 1;
        return answer(reply, 400, JOURNAL_ANSWERS.aborted, true);
      }
      await flush();
      return answer(reply, 202, JOURNAL_ANSWERS.accepted);
    });
    done();
  };
}
