import type { FastifyInstance } from 'fastify';
import { parseAuditQuery } from '../audit/audit-query.js';
import { assertPermitted } from '../roles/authorization.js';
import { parsePagination } from '../shared/pagination.js';
import { Unprocessable } from '../shared/problems.js';
import type { AuditEvent } from '../audit/audit-event.js';
import { may } from '../roles/authorization.js';
import type { Permission } from '../roles/permissions.js';
import type { User } from '../users/user.js';
import { AUDIT_FILTER_NAMES, type AuditFilterValues, auditListPage, type AuditNames, ID_FIELDS, type NamedKind, NAMED_TARGETS } from './audit-page.js';
import { consoleRoute, type ConsoleServices, everyRecord, pageContext, sendPage } from './console-page.js';

type Query = { Querystring: Record<string, string | string[] | undefined> };

const NO_NAMES: AuditNames = { user: new Map(), role: new Map(), user_group: new Map(), bucket: new Map() };

const PAGE_LIMITS = { defaultPerPage: 50, maxPerPage: 200 };

/** The ids of each kind of named thing a page of events mentions: actors, targets, and the id fields of their changes. */
function mentioned(events: readonly AuditEvent[]): Record<NamedKind, Set<number>> {
  const ids: Record<NamedKind, Set<number>> = { user: new Set(), role: new Set(), user_group: new Set(), bucket: new Set() };
  const add = (kind: NamedKind, given: unknown) => {
    for (const id of [given].flat(2)) if (typeof id === 'number' && Number.isSafeInteger(id)) ids[kind].add(id);
  };
  for (const e of events) {
    if (e.actor_id !== null) ids.user.add(e.actor_id);
    const targetKind = NAMED_TARGETS[e.target_type];
    if (targetKind && e.target_id !== null) ids[targetKind].add(e.target_id);
    let changes: unknown;
    try {
      changes = JSON.parse(e.changes);
    } catch {
      continue;
    }
    if (changes === null || typeof changes !== 'object') continue;
    for (const [field, value] of Object.entries(changes as Record<string, unknown>)) {
      const kind = ID_FIELDS[field];
      if (kind) add(kind, value);
    }
  }
  return ids;
}

/**
 * The names of what a page mentions, read through each feature's service as the viewer may: users
 * one by one (the page's, with users.read or oneself), roles, groups and buckets whole (short lists)
 * with their read permission. An id the viewer may not read, or gone since, stays an id.
 */
async function namesOf(services: ConsoleServices, viewer: User, events: readonly AuditEvent[]): Promise<AuditNames> {
  const ids = mentioned(events);
  const labels = async <T extends { id: number; label: string }>(permission: Permission, list: (limit: number, offset: number) => Promise<{ items: T[]; total: number }>, wanted: Set<number>) =>
    wanted.size === 0 || !may(viewer, permission) ? new Map<number, string>() : new Map((await everyRecord(list)).map((r) => [r.id, r.label]));
  const users = new Map<number, string>();
  await Promise.all([...ids.user].map(async (id) => {
    if (id === viewer.id) return users.set(id, viewer.login);
    if (!may(viewer, 'users.read')) return;
    const user = await services.users.get(viewer, id).catch(() => undefined);
    if (user) users.set(id, user.login);
  }));
  const [role, user_group, bucket] = await Promise.all([
    labels('roles.read', (limit, offset) => services.roles.list(viewer, limit, offset), ids.role),
    labels('user_groups.read', (limit, offset) => services.userGroups.list(viewer, limit, offset), ids.user_group),
    labels('buckets.read', (limit, offset) => services.buckets.list(viewer, limit, offset), ids.bucket),
  ]);
  return { user: users, role, user_group, bucket };
}

/** The audit log (docs/console.md#audit-log): for holders of audit_log.read, with the API's filters. */
export function consoleAuditRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { audit } = services;

  app.get<Query>('/audit', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'audit_log.read');
    const pagination = parsePagination([], { page: request.query.page, per_page: request.query.per_page }, PAGE_LIMITS);
    // The form sends every field, empty ones too: an empty filter is no filter.
    const given: Record<string, string> = {};
    for (const name of AUDIT_FILTER_NAMES) {
      const value = request.query[name];
      if (typeof value === 'string' && value.trim() !== '') given[name] = value.trim();
    }
    const filters = given as AuditFilterValues;
    const context = pageContext(request, services);
    try {
      const { items, total } = await audit.list(request.actor, parseAuditQuery(given), pagination.perPage, pagination.offset);
      reply.header('x-total', String(total));
      const names = await namesOf(services, request.viewer, items);
      return sendPage(reply, auditListPage(context, { events: items, total, page: pagination.page, perPage: pagination.perPage, filters, names }));
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, auditListPage(context, { events: [], total: 0, page: 1, perPage: pagination.perPage, filters, errors: error.messages, names: NO_NAMES }), 422);
    }
  });
}
