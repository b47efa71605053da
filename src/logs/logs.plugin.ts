import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import type { IngestKey } from '../ingest/ingest-key.js';
import type { IngestKeysService } from '../ingest/ingest-keys.service.js';
import type { TrackerService } from '../tracker/tracker.service.js';
import { journalCounters } from './journal-export.js';
import { journalUploadRoutes } from './journal-upload.routes.js';
import { logIngestion } from './log-ingestion.js';
import { logSourcesRoutes } from './log-sources.routes.js';
import { logSourcesService } from './log-sources.service.js';
import { logSourcesRepository } from './log-sources.store.js';
import { SILENCE_CHECK_MS, type SourceSilenceWatch, startSourceSilenceWatch } from './source-silence.js';
import { logRulesRoutes } from './log-rules.routes.js';
import { logRulesService } from './log-rules.service.js';
import { logRulesRepository } from './log-rules.store.js';
import { newOtlpCounters, otlpRoutes } from './otlp.routes.js';
import { startSyslogListeners, type SyslogListeners } from './syslog-listener.js';

/** What the log sources are made of (docs/architecture.md#how-a-feature-registers-itself). */
declare module 'fastify' {
  interface FastifyInstance {
    /** The log sources (docs/log-sources.md): `cmi serve` starts the syslog listeners through it. */
    logSources: LogsPlugin;
  }
}

export interface LogsPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  lists: ListSettings;
  /** The ingest keys' service: the log sources' keys, read from memory while no key changed. */
  keys: IngestKeysService;
  /** The tracker's service: errors are recorded through its group commit. */
  tracker: TrackerService;
  /** How often this process writes its sources' counts and its keys' use, in ms. */
  flushMs: number;
  /** The address links in silent and back alerts start with. */
  publicUrl: string;
  /** The outbox's wake: a silence check queued alerts. */
  wake: () => void;
  /** Where a failed silence check goes (the app's background faults). */
  onSilenceError: (error: unknown) => void;
}

/** A request's key and the address it came from (the host of a record that names none). */
interface Sender {
  key: IngestKey;
  address: string | undefined;
}

/** What the log sources counted, for /metrics (metrics/metrics.ts `logSources`). */
export interface LogSourceCounts {
  /** Records read, by source. */
  records: { syslog: number; journald: number; otlp: number };
  /** Records, requests, lines or connections dropped, by source and reason. */
  dropped: Array<{ source: string; reason: string; count: number }>;
  /** Records that were errors (recorded), and records below their threshold (counted on their source). */
  errors: number;
  lines: number;
  /** Syslog connections open now. */
  syslogConnections: number;
}

/**
 * The logs the cloud already writes (docs/log-sources.md): gives the ingestion, the operator rules and
 * the sources; registers the sources' list, the rules' routes, OTLP/HTTP's `/v1/logs` and `/v1/traces`
 * and the journal upload endpoint, each in a context of its own; starts the syslog listeners `cmi
 * serve` asks for (`listenSyslog`) and the silence check (`startSilenceWatch`); `stop` ends them and
 * writes what is counted (the app's close).
 */
export function logsPlugin({ database, clock, audit, lists, keys, tracker, flushMs, publicUrl, wake, onSilenceError }: LogsPieces) {
  const sources = logSourcesRepository(database);
  const sourcesService = logSourcesService(sources);
  let silence: SourceSilenceWatch | undefined;
  const rules = logRulesService(logRulesRepository(database), clock, audit, {
    version: database.dataVersions.credentials,
    heard: database.dataVersions.credentialsHeard,
  });
  const ingestion = logIngestion(keys, tracker, sources, clock, { flushMs, operatorRules: () => rules.promotionRules() });
  const otlp = newOtlpCounters();
  const journal = journalCounters();
  /** The syslog listeners started (cmi serve starts them once; a test may start more). */
  const syslogs: SyslogListeners[] = [];

  const counts = (): LogSourceCounts => {
    const dropped: LogSourceCounts['dropped'] = [];
    const add = (source: string, reasons: Record<string, number>) => {
      for (const [reason, count] of Object.entries(reasons)) dropped.push({ source, reason, count });
    };
    add('otlp', otlp.dropped);
    add('journald', journal.dropped);
    // The listeners' reasons and the ingestion's, one sum each (a connection refused and a line refused are both `unauthenticated`).
    const syslogDropped: Record<string, number> = { unauthenticated: ingestion.counters.unauthenticated, overloaded: ingestion.counters.overloaded, rate_limited: ingestion.counters.rate_limited };
    for (const listeners of syslogs) for (const [reason, count] of Object.entries(listeners.counters.dropped)) syslogDropped[reason] = (syslogDropped[reason] ?? 0) + count;
    add('syslog', syslogDropped);
    add('sources', { over_limit: sources.refused() });
    const sum = (of: (listeners: SyslogListeners) => number) => syslogs.reduce((total, listeners) => total + of(listeners), 0);
    return {
      records: { syslog: sum((listeners) => listeners.counters.records), journald: journal.records, otlp: otlp.records },
      dropped,
      errors: ingestion.counters.errors,
      lines: ingestion.counters.lines,
      syslogConnections: sum((listeners) => listeners.counters.connections.open),
    };
  };

  return {
    ingestion,
    rules,
    /** The sources as the console lists them. */
    sources: sourcesService,
    counts,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(logSourcesRoutes, { sources: sourcesService, lists });
      await app.register(logRulesRoutes, { rules, lists });
      await app.register(otlpRoutes<Sender>({
        counters: otlp,
        authenticate: async (token, address) => {
          const key = await ingestion.otlpKey(token, address);
          return key === undefined ? undefined : { key, address };
        },
        accept: async ({ key, address }, records) => {
          await ingestion.take(key, records, address);
          return { rejected: 0 };
        },
      }));
      await app.register(journalUploadRoutes<Sender>({
        counters: journal,
        authenticate: async (keyId, publicKey, peer) => {
          const key = await ingestion.journalKey(keyId, publicKey, peer);
          return key === undefined ? undefined : { key, address: peer.address };
        },
        accept: ({ key, address }, records) => ingestion.take(key, records, address),
      }));
    },

    /** Starts the syslog listeners (CMI_SYSLOG_LISTEN), all or none; their lines go to the ingestion. */
    async listenSyslog(specs: readonly string[], tls: { cert: Buffer; key: Buffer; ca: Buffer | undefined } | undefined): Promise<SyslogListeners | undefined> {
      if (specs.length === 0) return undefined;
      const syslog = await startSyslogListeners([...specs], {
        clock,
        ...(tls === undefined ? {} : { tls: { cert: tls.cert, key: tls.key, ...(tls.ca === undefined ? {} : { ca: tls.ca }) } }),
        onRecord: (record, peer) => ingestion.syslogRecord(record, peer),
        admits: (peer) => ingestion.syslogSenderAdmitted(peer),
        backlog: { full: () => ingestion.syslogFull(), room: () => ingestion.syslogRoom() },
      });
      syslogs.push(syslog);
      return syslog;
    },

    /** Starts the check for sources gone silent (docs/log-sources.md#sources-and-silence), every 15 s, until `stop`. */
    startSilenceWatch(intervalMs = SILENCE_CHECK_MS): void {
      silence = startSourceSilenceWatch({ database, clock, publicUrl, wake, onError: onSilenceError, intervalMs });
    },

    async stop(): Promise<void> {
      await silence?.stop();
      for (const listeners of syslogs.splice(0)) await listeners.close();
      await ingestion.stop();
    },
  };
}

export type LogsPlugin = ReturnType<typeof logsPlugin>;
