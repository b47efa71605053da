import { parseDatetime } from '../shared/datetime.js';
import { FieldErrors } from '../shared/problems.js';
import { idParameter, type Query, singleParameter } from '../shared/query-string.js';
import type { AuditFilters } from './audit.store.js';

/** Every parameter the audit list understands (docs/api.md#audit-log). */
const KNOWN = new Set(['page', 'per_page', 'actor_id', 'action', 'target_type', 'target_id', 'since', 'until']);
/** The longest action or target type (their columns, migration 024). */
const NAME_MAX = 64;

function name(query: Query, field: string, errors: FieldErrors): string | undefined {
  const value = singleParameter(query, field, errors);
  if (value === undefined) return undefined;
  if (!/^[a-z][a-z0-9_.]*$/.test(value) || value.length > NAME_MAX) {
    errors.add(field, `must be 1 to ${NAME_MAX} lower-case letters, digits, dots and underscores`);
    return undefined;
  }
  return value;
}

function time(query: Query, field: string, errors: FieldErrors): Date | undefined {
  const value = singleParameter(query, field, errors);
  if (value === undefined) return undefined;
  const parsed = parseDatetime(value);
  if (parsed === undefined) errors.add(field, 'must be a datetime (docs/api.md#datetimes)');
  return parsed;
}

/**
 * The filters of the audit list. A parameter the list does not know, or a value it does not
 * understand, is a 422 naming it, never ignored, as for the users list (users/users-query.ts).
 */
export function parseAuditQuery(query: Query): AuditFilters {
  const errors = new FieldErrors();
  for (const field of Object.keys(query)) {
    if (field !== '' && !KNOWN.has(field)) errors.add(field, 'is not a parameter of this list');
  }
  const filters: AuditFilters = {};
  const actorId = idParameter(query, 'actor_id', errors);
  if (actorId !== undefined) filters.actor_id = actorId;
  const action = name(query, 'action', errors);
  if (action !== undefined) filters.action = action;
  const targetType = name(query, 'target_type', errors);
  if (targetType !== undefined) filters.target_type = targetType;
  const targetId = idParameter(query, 'target_id', errors);
  if (targetId !== undefined) filters.target_id = targetId;
  const since = time(query, 'since', errors);
  if (since !== undefined) filters.since = since;
  const until = time(query, 'until', errors);
  if (until !== undefined) filters.until = until;
  errors.throwIfAny();
  return filters;
}
