import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { settingsRepository } from '../db/settings.store.js';
import { type Clock, systemClock } from '../shared/clock.js';
import { PageCacheMeter } from '../shared/page-cache.js';
import { registerBodyParsers } from '../http/body-parsers.js';
import { limitConnections, registerBodyTimeout, requestTimeoutOptions } from '../http/connections.js';
import { registerAccessLog } from '../http/hooks/access-log.js';
import { answerClientError } from '../http/hooks/client-errors.js';
import { answerUnroutable, registerErrorHandler } from '../http/hooks/error-handler.js';
import { registerFaultInjection } from '../http/hooks/fault-injection.js';
import { requestIdFrom, rewriteRequestUrl } from '../http/hooks/request-context.js';
import { registerResponseHeaders } from '../http/hooks/response-headers.js';
import { holdToRouteTable } from '../http/route-table.js';
import { auditPlugin } from '../audit/audit.plugin.js';
import { rolesPlugin } from '../roles/roles.plugin.js';
import { bucketsPlugin } from '../buckets/buckets.plugin.js';
import { changesPlugin } from '../changes/changes.plugin.js';
import { userGroupsPlugin } from '../user-groups/user-groups.plugin.js';
import { registerNotFoundAnswer, registerRequestGate } from '../users/request-gate.js';
import { newSessionSecret, sessionTokensOnceKeyed } from '../users/sessions.js';
import { usersPlugin } from '../users/users.plugin.js';
import { registerPasswordExpiry } from '../users/password-expiry.js';
import { registerTwoFactorRequirement } from '../users/two-factor-requirement.js';
import { trackerPlugin } from '../tracker/tracker.plugin.js';
import { alertsInBatch, alertsPlugin, outboxWake } from '../alerts/alerts.plugin.js';
import { ingestPlugin } from '../ingest/ingest.plugin.js';
import { identityPlugin } from '../identity/identity.plugin.js';
import { logsPlugin } from '../logs/logs.plugin.js';
import { versionPlugin } from '../version/version.plugin.js';
import { healthPlugin } from '../health/health.plugin.js';
import { openApiPlugin } from '../openapi/openapi.plugin.js';
import { metricsAreOn, metricsPlugin } from '../metrics/metrics.plugin.js';
import { consolePlugin } from '../console/console.plugin.js';
import { ROUTES } from './api-routes.js';
import { backgroundFaults } from './background-faults.js';
import { rootRoutes } from './root.routes.js';

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

/**
 * Builds the HTTP application (never listens: the caller does, or tests inject). It reads as the
 * list of what the app is made of (docs/architecture.md#how-a-feature-registers-itself): the shared
 * pieces, then each feature, made by its `<feature>.plugin.ts` from the pieces it uses, in the order
 * of what it needs; the HTTP hooks; each feature's routes, in the order they have always been
 * registered; the background work and what closing stops, in order.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, database } = options;

  // The shared pieces.
  const clock = options.clock ?? systemClock;
  const settings = settingsRepository(database);
  // Read now, or, with the database down, again each second while the app already answers (503).
  const sessions = sessionTokensOnceKeyed(() => settings.getOrInsert('session_secret', newSessionSecret()), clock, {
    maxAgeSeconds: config.sessionMaxAgeSeconds,
    idleSeconds: config.sessionIdleSeconds,
  });
  await sessions.loaded;
  // With the metrics on, the page caches report what they hold (docs/operations.md#metrics).
  const pageCacheMeter = metricsAreOn(config.metrics) ? new PageCacheMeter() : undefined;
  const lists = { defaultPerPage: config.defaultPerPage, maxPerPage: config.maxPerPage, pageCacheBytes: config.pageCacheBytes, ...(pageCacheMeter ? { pageCacheMeter } : {}) };
  // The audit trail (docs/security.md#the-audit-trail): every feature's service records its changes there.
  const audit = auditPlugin({ database, clock, retentionDays: config.auditRetentionDays, lists });
  // The app: the alerts and the reporter of background faults write to its log.
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers.cookie'] },
    // No per-request log lines: they cost every request much of its throughput; faults are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    // No child logger a request: faults are logged with their request id by the error handler.
    childLoggerFactory: (logger) => logger,
    bodyLimit: config.bodyLimitBytes,
    // CMI_TRUST_PROXY, one hop: the address the nearest proxy saw, not whatever a client wrote into
    // X-Forwarded-For. CMI_TRUSTED_PROXIES: proxy-addr's walk from the right, each hop believed only
    // while it came from a listed proxy (docs/operations.md#behind-a-proxy).
    trustProxy: config.trustedProxies.length > 0 ? [...config.trustedProxies] : config.trustProxy ? (_address: string, hop: number) => hop < 1 : false,
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
  // Faults of work no request waits for: captured by the tracker's fault capture once it is made (below).
  const background = backgroundFaults(app.log);
  // The outbox sends what the tracker's batches and the reports queue, and is made after them (it tells
  // the reports what it delivered): they wake it through this, pointed at it once the alerts are made.
  const outbox = outboxWake();

  // The features, each made from the pieces it uses, after those it uses.
  const version = versionPlugin({ onappVersion: config.onappVersion });
  const users = usersPlugin({ database, clock, audit: audit.trail, sessions: sessions.tokens, settings: config, lists, keyUsageFault: background('api-key-usage'), accessLogFault: background('last-access-log'), publicUrl: config.webhooks.publicUrl });
  const roles = rolesPlugin({ database, clock, audit: audit.trail, lists, rolesChanged: users.allCredentialsChanged });
  const buckets = bucketsPlugin({ database, clock, audit: audit.trail, lists });
  const userGroups = userGroupsPlugin({ database, clock, audit: audit.trail, lists, groupsChanged: users.allCredentialsChanged });
  const tracker = trackerPlugin({
    database, clock, audit: audit.trail, settings: config.errors, lists,
    alerts: alertsInBatch(config.webhooks, clock, database.dataVersions.alerts, outbox.wake),
    findUser: (id) => users.store.findById(id),
    version: version.version,
    faultFlushIntervalMs: options.faultFlushIntervalMs ?? 1000,
  });
  background.captureWith(tracker.faults);
  // Reports and alerts (docs/reporting-and-alerts.md); their failures go to the app's log, never to fault capture.
  const alerts = alertsPlugin({
    database, clock, audit: audit.trail, settings: config.webhooks, publicUrl: config.publicUrl, log: app.log, lists,
    tracker: tracker.service, errors: tracker.store, wake: outbox.wake,
  });
  outbox.wakes(alerts.outbox);
  const ingest = ingestPlugin({
    database, clock, audit: audit.trail, tracker: tracker.service, usageFlushMs: options.ingestUsageFlushMs ?? 5000, publicUrl: config.publicUrl, lists,
  });
  // The logs the cloud already writes (docs/log-sources.md): OTLP, journal uploads and syslog lines, recorded through the tracker.
  const logs = logsPlugin({
    database, clock, audit: audit.trail, lists, keys: ingest.keys, tracker: tracker.service, flushMs: options.ingestUsageFlushMs ?? 5000,
    publicUrl: config.webhooks.publicUrl, wake: outbox.wake, onSilenceError: background('source-silence'),
  });
  // Changes to the cloud (docs/changes.md), and the changes suspected of causing an error, read through the tracker.
  const changes = changesPlugin({ database, clock, audit: audit.trail, lists, tracker: tracker.service });
  // Signing in through the organisation's identity providers; their LDAP directories answer the passwords cmi does not keep.
  const identity = identityPlugin({
    database, clock, audit: audit.trail, users: users.store, lists, credentialsChanged: users.credentialsChanged, allCredentialsChanged: users.allCredentialsChanged,
  });
  users.authentication.useDirectory(identity.directory);
  const health = healthPlugin({ database, clock, ensureSessionKey: sessions.ensureKey });
  const openApi = openApiPlugin({ on: config.openApi, version: version.version });
  const metrics = metricsPlugin({
    settings: config.metrics,
    build: () => ({ version: version.releaseVersion(), node: process.version, database: database.dialect.name }),
    poolUse: database.poolUse,
    onQueryTime: database.onQueryTime,
    outboxPending: alerts.outboxPending,
    reportsWaiting: () => tracker.service.reportsWaiting(),
    pageCacheBytes: () => pageCacheMeter?.bytes() ?? new Map(),
    logSources: logs.counts,
  });

  // The hooks every request passes, before any route.
  registerBodyParsers(app, config.bodyLimitBytes);
  registerBodyTimeout(app, config);
  registerRequestGate(app, users.authentication);
  registerPasswordExpiry(app, users.passwordPolicy);
  registerTwoFactorRequirement(app);
  registerResponseHeaders(app);
  registerErrorHandler(app, config.faultInjection === 'uncaptured' ? undefined : tracker.faults, config.bodyLimitBytes);
  if (config.faultInjection !== 'off') registerFaultInjection(app);
  app.decorate('faults', tracker.faults);
  app.decorate('logSources', logs);
  // Hooks for metrics and the access log only when they are on: off, a request does no work for them.
  await metrics.instrument(app);
  if (config.accessLog) registerAccessLog(app, options.writeAccessLog ?? ((line) => process.stdout.write(line)));
  // The route table the app is held to: every feature's rows, and those a setting turns on (http/route-table.ts).
  const routes = [...ROUTES, ...openApi.routes, ...metrics.routes];
  const allRegistered = holdToRouteTable(app, routes);
  options.extend?.(app);
  await registerNotFoundAnswer(app, users.authentication);

  // Each feature's routes: plugins given exactly what they use, in this order.
  await version.register(app);
  await users.register(app);
  await roles.register(app);
  await buckets.register(app);
  await userGroups.register(app);
  await users.registerSessions(app);
  await health.register(app);
  await tracker.register(app);
  await audit.register(app);
  await alerts.register(app);
  await ingest.register(app);
  await logs.register(app);
  await identity.register(app);
  await changes.register(app);
  await app.register(rootRoutes);
  // In a context of its own: its hooks, form parser and error handler touch no API route (docs/console.md).
  await app.register(consolePlugin, {
    prefix: '/console', authenticator: users.authentication, sessionTokens: sessions.tokens, users: users.service, whiteLists: users.whiteLists, twoFactor: users.twoFactor, accountSecurity: users.accountSecurity, accountUnlock: users.accountUnlock, signInHandoff: users.signInHandoff, roles: roles.service, buckets: buckets.service,
    userGroups: userGroups.service, tracker: tracker.service, triage: tracker.triage, errorReporting: alerts.reporting, ingestKeys: ingest.keys, logSources: logs.sources, audit: audit.trail,
    alertRouting: alerts.routing, identityProviders: identity.service, sso: identity.sso, publicUrl: config.publicUrl, clock, passwordExpiry: users.passwordPolicy, passwordPolicy: users.passwordPolicy,
  });
  await openApi.register(app, routes);
  await metrics.register(app);
  allRegistered();

  // The background work, and what closing stops, in this order.
  const retention = tracker.startRetention({ claim: (name, until, now) => settings.claimLease(name, until, now) }, () => audit.trail.prune(), background('retention'));
  logs.startSilenceWatch();
  // Reports waiting for their receiver answer at once rather than hold the close up.
  app.addHook('preClose', (done) => {
    alerts.reporting.stop();
    done();
  });
  app.addHook('onClose', async () => {
    // The log sources first: their listeners closed, the lines they hold recorded while the tracker still takes them.
    await logs.stop();
    await alerts.outbox.stop();
    sessions.stop();
    await retention.stop();
    await tracker.service.drained();
    await users.flushKeyUsage();
    await ingest.stop();
    await tracker.faults.stop();
  });
  await app.ready();
  alerts.outbox.start();
  // Faults a process that crashed left behind (docs/operations.md#faults-of-cmi).
  tracker.recordSpooledFaults(background('fault-spool'));
  return app;
}
