import type { Config } from '../config.js';
import type { Authenticator } from '../users/authentication.js';
import type { Clock } from '../shared/clock.js';
import type { HealthService } from '../health/health.service.js';
import type { ErrorReporting } from '../alerts/reporting.js';
import type { InfrastructureErrors } from '../tracker/tracker.service.js';
import type { WebhookDeliveries } from '../alerts/deliveries.service.js';
import type { User } from '../users/user.js';
import type { SessionClaims, SessionTokens } from '../users/sessions.js';
import type { UsersService } from '../users/users.service.js';
import type { Format } from '../http/render/payload.js';
import type { RequestPath } from '../http/request-path.js';

/** What routes and hooks share: the configuration and the domain services. */
export interface AppContext {
  config: Config;
  clock: Clock;
  users: UsersService;
  infrastructureErrors: InfrastructureErrors;
  errorReporting: ErrorReporting;
  webhookDeliveries: WebhookDeliveries;
  authenticator: Authenticator;
  /** The installation's session tokens (the console derives its CSRF tokens from them). */
  sessionTokens: SessionTokens;
  health: HealthService;
  version: string;
  /** The database's data versions (Database.dataVersions), for caches of what was read. */
  dataVersions: Record<'users' | 'tracker', () => string | undefined>;
}

declare module 'fastify' {
  interface FastifyRequest {
    format: Format;
    /** performance.now() when the request arrived, for X-Runtime. */
    startedAt: number;
    requestPath: RequestPath;
    /** The authenticated user; set before any handler runs. */
    viewer: User;
    /** The session the request came with, when it used the cookie. */
    session: SessionClaims | undefined;
  }
  interface FastifyContextConfig {
    /** The route serves a paginated list and accepts pagination path segments. */
    paginated?: boolean;
    /** The route needs no credentials (health probes, the OpenAPI document and its page, /metrics with its own token). */
    public?: boolean;
    /** The one extension a fixed-format route answers to (`/openapi.json`, `/docs/reference.css`); others: 406. */
    extension?: string;
  }
}
