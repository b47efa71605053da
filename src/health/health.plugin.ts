import type { FastifyInstance } from 'fastify';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import { healthRoutes } from './health.routes.js';
import { healthService } from './health.service.js';

/** What the health probes are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface HealthPieces {
  database: Database;
  clock: Clock;
  /** Reads the session key now if it is missing: ready means able to log a client in (users/sessions.ts). */
  ensureSessionKey: () => Promise<void>;
}

/** The health probes (docs/operations.md#health-probes-for-load-balancers): registers `/health/live` and `/health/ready`. */
export function healthPlugin({ database, clock, ensureSessionKey }: HealthPieces) {
  const health = healthService(database, clock, ensureSessionKey);
  return {
    async register(app: FastifyInstance): Promise<void> {
      await app.register(healthRoutes, { health });
    },
  };
}
