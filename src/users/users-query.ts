import { FieldErrors } from '../shared/problems.js';
import { idParameter, type Query, singleParameter } from '../shared/query-string.js';
import { userLimits } from '../shared/limits.js';
import type { UserStatus } from './user.js';
import type { UserFilters } from './users.store.js';

/** Every parameter the users list understands (docs/api.md#users-list-filters). */
const KNOWN = new Set(['page', 'per_page', 'q', 'status', 'role_id', 'user_group_id']);
const STATUSES: readonly UserStatus[] = ['active', 'suspended', 'deleted'];
/** The longest `q`: the longest field it is compared with (an email). */
const Q_MAX = userLimits.email;

/**
 * The filters of a users list (docs/api.md#users-list-filters). A parameter the list does not know, or
 * a value it does not understand, is a 422 naming it, never ignored (a misspelt filter would widen
 * the list), as for the error list (tracker/query.ts).
 */
export function parseUserListQuery(query: Query, { groupList = false } = {}): UserFilters {
  const errors = new FieldErrors();
  for (const name of Object.keys(query)) {
    if (name !== '' && (!KNOWN.has(name) || (groupList && name === 'user_group_id'))) errors.add(name, 'is not a parameter of this list');
  }
  const filters: UserFilters = {};
  const q = singleParameter(query, 'q', errors);
  if (q !== undefined) {
    if (q.includes('\u0000')) errors.add('q', 'must not contain the NUL character (U+0000)');
    else if (q === '' || q.length > Q_MAX) errors.add('q', `must be 1 to ${Q_MAX} characters`);
    else filters.q = q;
  }
  const status = singleParameter(query, 'status', errors);
  if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) errors.add('status', `must be one of ${STATUSES.join(', ')}`);
  else if (status !== undefined) filters.status = status as UserStatus;
  const roleId = idParameter(query, 'role_id', errors);
  if (roleId !== undefined) filters.role_id = roleId;
  const groupId = groupList ? undefined : idParameter(query, 'user_group_id', errors);
  if (groupId !== undefined) filters.user_group_id = groupId;
  errors.throwIfAny();
  return filters;
}
