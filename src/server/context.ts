import type { Config } from '../config.js';
import type { Authenticator } from '../domain/authentication.js';
import type { Clock } from '../domain/clock.js';
import type { HealthService } from '../domain/health.js';
import type { ErrorReporting } from '../domain/error-reporting.js';
import type { InfrastructureErrors } from '../domain/infrastructure-errors.js';
import type { WebhookDeliveries } from '../domain/webhook-deliveries.js';
import type { User } from '../domain/records.js';
import type { SessionClaims, SessionTokens } from '../domain/sessions.js';
import type { UsersService } from '../domain/users.js';
import type { Format } from '../render/payload.js';
import type { RequestPath } from './request-path.js';

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
