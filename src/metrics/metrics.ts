import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { UNMATCHED_ROUTE } from '../http/route-label.js';

const REPORTS_ROUTE = '/sysadmin_tools/infrastructure/errors';
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
/** Default metrics of prom-client that are not served (docs/operations.md#metrics). */
export const PROM_CLIENT_GAUGES_NAMED_TOTAL = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export interface Metrics {
  readonly registry: Registry;
  /** The text of a scrape, in the Prometheus text format. */
  scrape(): Promise<string>;
  readonly contentType: string;
}

/**
 * This process's metrics (docs/operations.md#metrics): requests by route pattern, method and status
 * class; latency by route; requests in flight; authentication outcomes; error reports recorded and
 * refused; what runs; the database pool; the outbox's backlog, the group commit's queue and the page
 * caches; prom-client's process defaults. Made only when metrics are on, and
 * its hooks registered only then: with metrics off a request does no metrics work at all, and this
 * module (and prom-client) is not even loaded (metrics/metrics.plugin.ts imports it when needed).
 */
export interface MetricsSources {
  /** What runs: cmi's version, node's and the database's kind (`cmi_build_info`). */
  build?: { version: string; node: string; database: string };
  /** The database pool's use now (SQLite: its one connection). */
  poolUse?: () => { total: number; idle: number; waiting: number };
  /** Webhook deliveries still to be sent, read from the database at each scrape. */
  outboxPending?: () => Promise<number>;
  /** Error reports waiting for the group commit's next batch. */
  reportsWaiting?: () => number;
  /** Bytes each page cache holds now, by cache name. */
  pageCacheBytes?: () => Map<string, number>;
  /** What the log sources counted since the start (docs/log-sources.md), read at each scrape. */
  logSources?: () => {
    records: Record<string, number>;
    dropped: ReadonlyArray<{ source: string; reason: string; count: number }>;
    errors: number;
    lines: number;
    syslogConnections: number;
  };
  /** Hands over an observer of each query's duration (PostgreSQL). */
  onQueryTime?: (observer: (seconds: number) => void) => void;
}

export function registerMetrics(app: FastifyInstance, options: MetricsSources): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client's sums of its labelled nodejs_active_{handles,requests,resources} gauges are gauges
  // named *_total, a suffix Prometheus keeps for counters (`promtool check metrics` refuses them).
  // Left out: `sum(nodejs_active_handles)` is the same figure (docs/operations.md#metrics).
  for (const name of PROM_CLIENT_GAUGES_NAMED_TOTAL) registry.removeSingleMetric(name);
  const requests = new Counter({
    name: 'cmi_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status class',
    labelNames: ['route', 'method', 'status_class'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'cmi_http_request_duration_seconds',
    help: 'Time from the request\'s arrival to its answer being sent, by route pattern',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  // Plain counts, read when scraped: cheaper than a gauge moved twice a request. A request ends once,
  // when its response closes: after its answer was sent, or when its connection went first (a body cut
  // off, a socket destroyed, a timeout), as docs/operations.md#metrics says. Not at onResponse: fastify
  // runs that only for an answer sent, never for a client gone before it.
  let started = 0;
  let ended = 0;
  const COUNTED = Symbol('cmi.inFlightEnded');
  function requestEnded(this: ServerResponse & { [COUNTED]?: true }) {
    if (this[COUNTED]) return;
    this[COUNTED] = true;
    ended += 1;
  }
  new Gauge({
    name: 'cmi_http_requests_in_flight',
    help: 'Requests received and not ended yet: neither answered nor left by their connection',
    registers: [registry],
    collect() {
      this.set(started - ended);
    },
  });
  const authentications = new Counter({
    name: 'cmi_authentications_total',
    help: 'Requests that needed credentials, by outcome: ok, failed (401) or locked (429 before any credential was accepted)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const reports = new Counter({
    name: 'cmi_infrastructure_error_reports_total',
    help: 'Error reports received over HTTP and recorded, by whether they started a new error (201) or counted a known one (200)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const rejected = new Counter({
    name: 'cmi_infrastructure_error_reports_rejected_total',
    help: 'Error reports received over HTTP and not recorded, by status (422 invalid, 429 rate limit, 503 queue full ...)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  for (const outcome of ['ok', 'failed', 'locked']) authentications.inc({ outcome }, 0);
  const authenticated = { ok: authentications.labels('ok'), failed: authentications.labels('failed'), locked: authentications.labels('locked') };
  for (const kind of ['new', 'repeat']) reports.inc({ kind }, 0);
  const { poolUse, build, outboxPending, reportsWaiting, pageCacheBytes } = options;
  if (build) {
    new Gauge({
      name: 'cmi_build_info',
      help: 'What runs: always 1, labelled with cmi\'s version, node\'s version and the database (sqlite or postgres)',
      labelNames: ['version', 'node', 'database'] as const,
      registers: [registry],
    }).set(build, 1);
  }
  if (poolUse) {
    new Gauge({
      name: 'cmi_db_pool_connections',
      help: 'Database connections of this process: open (total), idle, in use, and queries waiting for one (SQLite: its one connection)',
      labelNames: ['state'] as const,
      registers: [registry],
      collect() {
        const use = poolUse();
        this.set({ state: 'total' }, use.total);
        this.set({ state: 'idle' }, use.idle);
        this.set({ state: 'in_use' }, use.total - use.idle);
        this.set({ state: 'waiting' }, use.waiting);
      },
    });
  }
  if (outboxPending) {
    new Gauge({
      name: 'cmi_webhook_deliveries_pending',
      help: 'Webhook deliveries in the outbox still to be sent or retried, all processes together (read from the database when scraped)',
      registers: [registry],
      async collect() {
        // A database that cannot answer leaves the gauge without a sample rather than fail the scrape.
        try {
          this.set(await outboxPending());
        } catch {
          this.reset();
        }
      },
    });
  }
  if (reportsWaiting) {
    new Gauge({
      name: 'cmi_infrastructure_error_reports_waiting',
      help: 'Error reports of this process waiting for the group commit\'s next batch (CMI_ERRORS_QUEUE bounds it)',
      registers: [registry],
      collect() {
        this.set(reportsWaiting());
      },
    });
  }
  if (pageCacheBytes) {
    new Gauge({
      name: 'cmi_page_cache_bytes',
      help: 'What this process\'s caches of rendered pages hold, in bytes, by cache (each bounded by CMI_PAGE_CACHE_BYTES)',
      labelNames: ['cache'] as const,
      registers: [registry],
      collect() {
        for (const [cache, bytes] of pageCacheBytes()) this.set({ cache }, bytes);
      },
    });
  }

  if (options.logSources) {
    const read = options.logSources;
    // Counters kept by the readers themselves: each scrape sets them to what they hold.
    new Counter({
      name: 'cmi_log_records_total',
      help: 'Records the log sources read (syslog lines, journal entries, OTLP log records and exception events), by source',
      labelNames: ['source'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [source, count] of Object.entries(read().records)) this.inc({ source }, count);
      },
    });
    new Counter({
      name: 'cmi_log_dropped_total',
      help: 'What the log sources dropped, by source and reason (docs/log-sources.md): lines, requests or connections',
      labelNames: ['source', 'reason'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const { source, reason, count } of read().dropped) this.inc({ source, reason }, count);
      },
    });
    new Counter({
      name: 'cmi_log_records_judged_total',
      help: 'Log records judged: `error` recorded as infrastructure errors, `line` below their key\'s threshold (counted on their source)',
      labelNames: ['verdict'] as const,
      registers: [registry],
      collect() {
        this.reset();
        const counts = read();
        this.inc({ verdict: 'error' }, counts.errors);
        this.inc({ verdict: 'line' }, counts.lines);
      },
    });
    new Gauge({
      name: 'cmi_syslog_connections',
      help: 'Syslog TCP and TLS connections open now in this process',
      registers: [registry],
      collect() {
        this.set(read().syslogConnections);
      },
    });
  }

  if (options.onQueryTime) {
    const queries = new Histogram({
      name: 'cmi_db_query_duration_seconds',
      help: 'Time of each PostgreSQL query of this process, from sending it to its answer',
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    });
    options.onQueryTime((seconds) => queries.observe(seconds));
  }

  // Synchronous hooks: fastify runs them without creating a promise.
  // Each route's series, looked up once: prom-client hashes a label object on every inc() given one.
  const series = new Map<string, { duration: Histogram.Internal<'route'>; counts: Map<string, Counter.Internal> }>();
  const seriesOf = (route: string) => {
    let found = series.get(route);
    if (!found) {
      found = { duration: duration.labels(route), counts: new Map() };
      series.set(route, found);
    }
    return found;
  };

  app.addHook('onRequest', (request, reply, done) => {
    started += 1;
    const response = reply.raw;
    response.on('close', requestEnded);
    // A request pipelined behind another on its connection has no socket for its response yet, and
    // Node never closes such a response when the connection goes: its end is the socket's close.
    const socket = request.raw.socket;
    if (response.socket === null && socket !== null) {
      const connectionGone = () => requestEnded.call(response);
      socket.once('close', connectionGone);
      response.once('close', () => socket.off('close', connectionGone));
    }
    done();
  });
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED_ROUTE;
    const status = reply.statusCode;
    const statusClass = STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';
    const { duration: latency, counts } = seriesOf(route);
    const key = `${request.method} ${statusClass}`;
    let count = counts.get(key);
    if (!count) {
      count = requests.labels(route, request.method, statusClass);
      counts.set(key, count);
    }
    count.inc();
    latency.observe(reply.elapsedTime / 1000);
    if (!request.routeOptions.config.public) {
      if (request.viewer !== undefined) authenticated.ok.inc();
      else if (status === 401) authenticated.failed.inc();
      else if (status === 429) authenticated.locked.inc();
    }
    if (route === REPORTS_ROUTE && request.method === 'POST') {
      if (status === 201) reports.inc({ kind: 'new' });
      else if (status === 200) reports.inc({ kind: 'repeat' });
      else if (status >= 400) rejected.inc({ status: String(status) });
    }
    done();
  });

  return { registry, contentType: registry.contentType, scrape: () => registry.metrics() };
}

