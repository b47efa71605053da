import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { rolesRoutes } from './roles.routes.js';
import { rolesService } from './roles.service.js';
import { rolesRepository } from './roles.store.js';

/** What the roles are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface RolesPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  lists: ListSettings;
  /** Told of every change to a role: it may change any user's permissions (the users' credential cache). */
  rolesChanged: () => void;
}

/** The roles and the permission catalogue: gives the roles service; registers `/roles` and `/permissions`. */
export function rolesPlugin({ database, clock, audit, lists, rolesChanged }: RolesPieces) {
  const roles = rolesService(rolesRepository(database), clock, audit, rolesChanged);
  return {
    service: roles,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(rolesRoutes, { roles, lists });
    },
  };
}
