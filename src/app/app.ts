import { randomUUID } from 'node:crypto';
import { INTERNAL_ERROR_CODE } from '../shared/problems.js';
import { hostname } from 'node:os';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Config } from '../config.js';
import { authenticator } from '../users/authentication.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { healthService } from '../health/health.service.js';
import { type FaultCapture, faultCapture } from '../tracker/fault-capture.js';
import { alertPlanner, routeReport } from '../alerts/planner.js';
import { errorReporting } from '../alerts/reporting.js';
import { trackerService } from '../tracker/tracker.service.js';
import { webhookDeliveries } from '../alerts/deliveries.service.js';
import { webhookOutbox } from '../alerts/outbox.js';
import { webhookRendering } from '../alerts/webhook-json.js';
import { every, retentionJob } from '../tracker/retention.js';
import { newSessionSecret, sessionTokensOnceKeyed } from '../users/sessions.js';
import { lockout } from '../users/lockout.js';
import { usersService } from '../users/users.service.js';
import { verificationCache } from '../users/verification-cache.js';
import { cmiReleaseVersion, cmiVersion } from '../version/version.js';
import { PageCacheMeter } from '../shared/page-cache.js';
import type { Database } from '../db/database.js';
import { faultSpool } from '../tracker/fault-spool.js';
import { trackerRepository } from '../tracker/tracker.store.js';
import { loginFailuresRepository } from '../users/login-failures.store.js';
import { revokedSessionsRepository } from '../users/revoked-sessions.store.js';
import { settingsRepository } from '../db/settings.store.js';
import { usersRepository } from '../users/users.store.js';
import { webhookDeliveriesRepository } from '../alerts/deliveries.store.js';
import { registerBodyParsers } from '../http/body-parsers.js';
import { limitConnections, registerBodyTimeout, requestTimeoutOptions } from '../http/connections.js';
import { answerClientError } from '../http/hooks/client-errors.js';
import { answerUnroutable, registerErrorHandler } from '../http/hooks/error-handler.js';
import { registerFaultInjection } from '../http/hooks/fault-injection.js';
import { requestIdFrom, rewriteRequestUrl } from '../http/hooks/request-context.js';
import { registerNotFoundAnswer, registerRequestGate } from '../users/request-gate.js';
import { registerResponseHeaders } from '../http/hooks/response-headers.js';
import { deliveriesRoutes } from '../alerts/deliveries.routes.js';
import { alertRoutingRoutes } from '../alerts/alert-routing.routes.js';
import { alertRoutingService } from '../alerts/alert-routing.service.js';
import { alertRoutingRepository } from '../alerts/alert-routing.store.js';
import { trackerRoutes } from '../tracker/tracker.routes.js';
import { triageRoutes } from '../tracker/triage.routes.js';
import { triageService } from '../tracker/triage.service.js';
import { trackerChanges } from '../tracker/tracker-changes.js';
import { triageRepository } from '../tracker/triage.store.js';
import { healthRoutes } from '../health/health.routes.js';
import { consolePlugin } from '../console/console.plugin.js';
import { rootRoutes } from './root.routes.js';
import { sessionRoutes } from '../users/session.routes.js';
import { usersRoutes } from '../users/users.routes.js';
import { userApiKeysRoutes } from '../users/user-api-keys.routes.js';
import { userApiKeysRepository } from '../users/user-api-keys.store.js';
import { apiKeyUsage } from '../users/api-key-usage.js';
import { rolesRoutes } from '../roles/roles.routes.js';
import { rolesService } from '../roles/roles.service.js';
import { rolesRepository } from '../roles/roles.store.js';
import { bucketsRoutes } from '../buckets/buckets.routes.js';
import { bucketsService } from '../buckets/buckets.service.js';
import { bucketsRepository } from '../buckets/buckets.store.js';
import { userGroupsRoutes } from '../user-groups/user-groups.routes.js';
import { userGroupsService } from '../user-groups/user-groups.service.js';
import { userGroupsRepository } from '../user-groups/user-groups.store.js';
import { versionRoutes } from '../version/version.routes.js';
import { ingestKeysRoutes } from '../ingest/ingest-keys.routes.js';
import { ingestKeysService } from '../ingest/ingest-keys.service.js';
import { ingestKeysRepository } from '../ingest/ingest-keys.store.js';
import { sentryIngestion } from '../ingest/sentry-ingestion.js';
import { sentryRoutes } from '../ingest/sentry.routes.js';
import { registerAccessLog } from '../http/hooks/access-log.js';
import type { Metrics } from '../metrics/metrics.js';
import { ROUTES } from './api-routes.js';
import { auditTrailOn } from '../audit/audit-trail.js';
import { auditRoutes } from '../audit/audit.routes.js';
import { holdToRouteTable } from '../http/route-table.js';
import { METRICS_ROUTE, metricsRoutes } from '../metrics/metrics.routes.js';
import { OPENAPI_ROUTES, openApiRoutes } from '../openapi/openapi.routes.js';

/** The schema compilers: none, since no route declares a schema; one that does fails at start. */
function noRouteSchemas(): never {
  throw new Error('cmi declares no route schemas: a route with one needs a schema compiler (src/app/app.ts)');
}

export interface AppOptions {
  config: Config;
  /** An open, migrated database. The app does not close it. */
  database: Database;
  clock?: Clock;
  /** Fastify logger options; defaults to the configured level, without per-request lines. */
  logger?: boolean | object;
  /** How often held faults are written by themselves (tests that watch them held set it long). */
  faultFlushIntervalMs?: number;
  /** How often each process writes its ingest keys' use (last use, events dropped); default 5 s. */
  ingestUsageFlushMs?: number;
  /** Where access-log lines go (CMI_ACCESS_LOG=1); stdout unless given. */
  writeAccessLog?: (line: string) => void;
  /** Hooks a caller adds before the app is ready (the tests' response validation, test/support/app.ts). */
  extend?: (app: FastifyInstance) => void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** cmi's own faults, held until written (tests flush it to read them back at once). */
    faults: FaultCapture;
    /** This process's metrics when CMI_METRICS_TOKEN or CMI_METRICS_PORT is set (docs/operations.md#metrics). */
    metrics: Metrics | undefined;
  }
}

/** How often the retention job runs in each process (one of them does the work: tracker/retention.ts). */
const RETENTION_INTERVAL_MS = 3_600_000;

/** Builds the HTTP application (never listens: the caller does, or tests inject). */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  const clock = options.clock ?? systemClock;
  const settings = settingsRepository(database);
  // Read now, or, with the database down, again each second while the app already answers (503).
  const sessions = sessionTokensOnceKeyed(() => settings.getOrInsert('session_secret', newSessionSecret()), clock, {
    maxAgeSeconds: config.sessionMaxAgeSeconds,
    idleSeconds: config.sessionIdleSeconds,
  });
  await sessions.loaded;
  const users = usersRepository(database);
  // Another process's change to a user drops this one's verified credentials at once (docs/security.md#suspend-now-means-now).
  const cache = verificationCache(clock, { ttlMs: config.authCacheSeconds * 1000, maxEntries: 10_000 }, {
    version: database.dataVersions.credentials,
    heard: database.dataVersions.credentialsHeard,
  });
  const guesses = lockout(loginFailuresRepository(database), clock, {
    maxFailures: config.lockoutMaxFailures,
    addressMaxFailures: config.lockoutAddressMaxFailures,
    accountMaxFailures: config.lockoutAccountMaxFailures,
    windowSeconds: config.lockoutWindowSeconds,
  });
  // The audit trail (docs/security.md#the-audit-trail): every feature's service records its changes there.
  const audit = auditTrailOn(database, clock, config.auditRetentionDays);
  const errorsRepository = trackerRepository(database);
  const deliveries = webhookDeliveriesRepository(database);
  // Reports and alerts (docs/reporting-and-alerts.md). Their failures go to the app's log (made
  // below, before anything is sent), never to fault capture: a failed alert must not raise one.
  const webhookLog = {
    warn: (fields: Record<string, unknown>, message: string) => app.log.warn(fields, message),
    info: (fields: Record<string, unknown>, message: string) => app.log.info(fields, message),
  };
  const { webhooks } = config;
  const queueAlerts = alertPlanner(webhooks, clock, webhookRendering, database.dataVersions.alerts);
  // What this process's batches of reports changed, told to the tracker's page cache (tracker/tracker-changes.ts).
  const changesOfTracker = trackerChanges();
  const tracker = trackerService(errorsRepository, clock, audit, config.errors, { queue: queueAlerts, queued: () => outbox.wake() }, { withheld: database.withheld, tracker: changesOfTracker });
  // Alert routing (docs/alert-routing.md): destinations and rules in the database, sent by the same outbox.
  const routingRepository = alertRoutingRepository(database);
  const reporting = errorReporting(tracker, errorsRepository, deliveries, clock, webhooks, webhookRendering, webhookLog, audit, {
    route: (record) => routeReport(routingRepository, record, { publicUrl: webhooks.publicUrl, rendering: webhookRendering, clock }),
    queued: () => outbox.wake(),
  });
  const outbox = webhookOutbox(deliveries, clock, webhooks, webhookLog, async (delivery) => {
    if (delivery.kind === 'report' && delivery.destination_id === null) await reporting.delivered(delivery.error_id);
  }, routingRepository);
  const version = cmiVersion();
  const faults = faultCapture(tracker.recordReports, clock, { host: hostname(), version }, {
    flushIntervalMs: options.faultFlushIntervalMs ?? 1000,
    maxFingerprints: 1000,
  });
  // Error triage (docs/api.md#error-triage): an assignee is a user who is not deleted and may read errors.
  const triage = triageService(triageRepository(database), clock, audit, async (userId) => {
    const user = await users.findById(userId);
    return user !== undefined && user.status !== 'deleted' && user.permissions.has('infrastructure_errors.read');
  });
  const apiKeys = userApiKeysRepository(database);
  const accounts = usersService(users, clock, audit, cache.credentialsChanged, guesses, apiKeys);
  // When each API key was last used, written apart from the requests (docs/security.md#api-keys).
  const keyUsage = apiKeyUsage((uses) => apiKeys.recordUse(uses), clock, (error) => background('api-key-usage')(error));
  const authentication = authenticator({
    users,
    revokedSessions: revokedSessionsRepository(database),
    sessions: sessions.tokens,
    cache,
    lockout: guesses,
    clock,
    apiKeyUsed: (id) => keyUsage.used(id),
    audit,
  });
  const metricsOn = config.metrics.token !== undefined || config.metrics.port !== undefined;
  // With the metrics on, the page caches report what they hold (docs/operations.md#metrics).
  const pageCacheMeter = metricsOn ? new PageCacheMeter() : undefined;
  const lists = { defaultPerPage: config.defaultPerPage, maxPerPage: config.maxPerPage, pageCacheBytes: config.pageCacheBytes, ...(pageCacheMeter ? { pageCacheMeter } : {}) };

  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    // No per-request log lines: they cost every request much of its throughput; faults are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger a request: faults are logged with their request id by the error handler.
    childLoggerFactory: (logger) => logger,
    bodyLimit: config.bodyLimitBytes,
    // One hop: the address the nearest proxy saw, not whatever a client wrote into X-Forwarded-For.
    trustProxy: config.trustProxy ? (_address: string, hop: number) => hop < 1 : false,
    routerOptions: { maxParamLength: 200 },
    // cmi declares no route schemas (it reads bodies and renders answers itself); without these fastify
    // would load ajv and fast-json-stringify at every start for nothing (docs/operations.md#start-up).
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
    genReqId: (raw) => requestIdFrom(raw.headers['x-request-id'], randomUUID),
    rewriteUrl: rewriteRequestUrl,
    // A URL the router cannot even take apart (bad percent-encoding, a 10,000-character id): no such resource.
    frameworkErrors: (_error, request, reply) => answerUnroutable(request, reply),
    clientErrorHandler: answerClientError,
    ...requestTimeoutOptions(config),
  });
  limitConnections(app.server, config);

  registerBodyParsers(app, config.bodyLimitBytes);
  registerBodyTimeout(app, config);
  registerRequestGate(app, authentication);
  registerResponseHeaders(app);
  registerErrorHandler(app, config.faultInjection === 'uncaptured' ? undefined : faults, config.bodyLimitBytes);
  if (config.faultInjection !== 'off') registerFaultInjection(app);
  app.decorate('faults', faults);
  // Hooks for metrics and the access log only when they are on: off, a request does no work for them.
  // prom-client is loaded only when metrics are on: off, start-up does not pay for it either.
  const metrics = metricsOn
    ? (await import('../metrics/metrics.js')).registerMetrics(app, {
      build: { version: cmiReleaseVersion(), node: process.version, database: database.dialect.name },
      poolUse: database.poolUse,
      onQueryTime: database.onQueryTime,
      outboxPending: () => deliveries.countPending(),
      reportsWaiting: () => tracker.reportsWaiting(),
      pageCacheBytes: () => pageCacheMeter?.bytes() ?? new Map(),
    })
    : undefined;
  app.decorate('metrics', metrics);
  if (config.accessLog) registerAccessLog(app, options.writeAccessLog ?? ((line) => process.stdout.write(line)));
  const routes = [...ROUTES, ...(config.openApi ? OPENAPI_ROUTES : []), ...(metrics && config.metrics.token !== undefined ? [METRICS_ROUTE] : [])];
  const allRegistered = holdToRouteTable(app, routes);
  options.extend?.(app);
  await registerNotFoundAnswer(app, authentication);

  // Each feature registers its routes as a plugin given exactly what it uses.
  await app.register(versionRoutes, { version: config.onappVersion });
  await app.register(usersRoutes, { users: accounts, lists, dataVersion: database.dataVersions.users });
  const roles = rolesService(rolesRepository(database), clock, audit, cache.allCredentialsChanged);
  const buckets = bucketsService(bucketsRepository(database), clock, audit);
  await app.register(userApiKeysRoutes, { users: accounts, lists });
  await app.register(rolesRoutes, { roles, lists });
  await app.register(bucketsRoutes, { buckets, lists });
  const userGroups = userGroupsService(userGroupsRepository(database), clock, audit, cache.allCredentialsChanged);
  await app.register(userGroupsRoutes, { userGroups, lists });
  await app.register(sessionRoutes, { authenticator: authentication, clock });
  await app.register(healthRoutes, { health: healthService(database, clock, sessions.ensureKey) });
  // The tracker's pages show who is assigned, which a user's deletion changes (migration 023): they
  // follow the users' data version too.
  // Asked on every read of the tracker: the joined string is made again only when a part moved.
  let joined: { tracked: string; people: string; version: string } | undefined;
  const trackerAndUsersVersion = () => {
    const tracked = database.dataVersions.tracker();
    const people = database.dataVersions.users();
    if (tracked === undefined || people === undefined) return undefined;
    if (tracked !== joined?.tracked || people !== joined.people) joined = { tracked, people, version: `${tracked}|${people}` };
    return joined.version;
  };
  await app.register(trackerRoutes, { tracker, lists, dataVersion: trackerAndUsersVersion, beforeRead: triage.wakeIfDue, partialChanges: changesOfTracker.changes });
  await app.register(triageRoutes, { triage, lists });
  await app.register(auditRoutes, { audit, lists });
  await app.register(deliveriesRoutes, { errorReporting: reporting, webhookDeliveries: webhookDeliveries(deliveries, clock, audit, () => outbox.wake()), lists });
  const routing = alertRoutingService(routingRepository, deliveries, clock, webhooks, webhookRendering, () => outbox.wake(), audit);
  await app.register(alertRoutingRoutes, { routing, lists, publicUrl: config.publicUrl });
  const ingestKeys = ingestKeysService(ingestKeysRepository(database), clock, audit, {
    version: database.dataVersions.credentials,
    heard: database.dataVersions.credentialsHeard,
  });
  await app.register(ingestKeysRoutes, { keys: ingestKeys, lists, publicUrl: config.publicUrl });
  // In a context of its own: any body, read with the Sentry limits, and Sentry's error answers (docs/sentry.md).
  const ingestion = sentryIngestion(ingestKeys, tracker, clock, { usageFlushMs: options.ingestUsageFlushMs ?? 5000 });
  await app.register(sentryRoutes, { ingestion });
  await app.register(rootRoutes);
  // In a context of its own: its hooks, form parser and error handler touch no API route (docs/console.md).
  await app.register(consolePlugin, {
    prefix: '/console', authenticator: authentication, sessionTokens: sessions.tokens, users: accounts, roles, buckets, userGroups, tracker, triage, errorReporting: reporting,
    ingestKeys, audit, alertRouting: routing, publicUrl: config.publicUrl, clock,
  });
  if (config.openApi) await app.register(openApiRoutes, { version, routes });
  if (metrics && config.metrics.token !== undefined) await app.register(metricsRoutes, { metrics, token: config.metrics.token });
  allRegistered();

  const retention = retentionJob(async () => {
    await triage.wakeSnoozed();
    const pruned = await tracker.prune();
    await audit.prune();
    return pruned;
  }, { claim: (name, until, now) => settings.claimLease(name, until, now) }, clock, RETENTION_INTERVAL_MS);
  const background = (component: string) => (error: unknown) => {
    const fault = faults.capture(error, { component });
    if (fault.log) app.log.error({ code: INTERNAL_ERROR_CODE, err: error, fingerprint: fault.fingerprint, component, repeated: fault.repeated }, 'fault');
  };
  const retentionTimer = every(RETENTION_INTERVAL_MS, 60_000, () => retention.run(), background('retention'));

  // Reports waiting for their receiver answer at once rather than hold the close up.
  app.addHook('preClose', (done) => {
    reporting.stop();
    done();
  });
  app.addHook('onClose', async () => {
    await outbox.stop();
    sessions.stop();
    await retentionTimer.stop();
    await tracker.drained();
    await keyUsage.flush();
    await ingestion.stop();
    await faults.stop();
  });
  await app.ready();
  outbox.start();
  // Faults a process that crashed left behind (docs/operations.md#faults-of-cmi).
  const spool = faultSpool(config.errors.spoolDirectory);
  for (const { reports, done } of spool.take()) {
    void tracker.recordReports(reports).then(done).catch(background('fault-spool'));
  }
  return app;
}
