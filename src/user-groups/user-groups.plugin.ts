import type { FastifyInstance } from 'fastify';
import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Database } from '../db/database.js';
import type { Clock } from '../shared/clock.js';
import type { ListSettings } from '../shared/pagination.js';
import { userGroupsRoutes } from './user-groups.routes.js';
import { userGroupsService } from './user-groups.service.js';
import { userGroupsRepository } from './user-groups.store.js';

/** What the user groups are made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface UserGroupsPieces {
  database: Database;
  clock: Clock;
  audit: AuditRecorder;
  lists: ListSettings;
  /** Told of every change to a group: its roles apply to its members (the users' credential cache). */
  groupsChanged: () => void;
}

/** The user groups: gives their service; registers `/user_groups`. */
export function userGroupsPlugin({ database, clock, audit, lists, groupsChanged }: UserGroupsPieces) {
  const userGroups = userGroupsService(userGroupsRepository(database), clock, audit, groupsChanged);
  return {
    service: userGroups,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(userGroupsRoutes, { userGroups, lists });
    },
  };
}
