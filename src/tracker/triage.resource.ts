import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** An error's triage statuses (docs/api.md#error-triage); here, so cmi/client reads them without the server's code. */
export const TRIAGE_STATUSES = ['unresolved', 'resolved', 'ignored', 'snoozed'] as const;

/** An error's triage (docs/api.md#error-triage). */
export const triageResource = {
  root: 'triage',
  plural: 'triages',
  fields: [
    ['status', 'string'],
    ['assignee_id', 'integer', 'nullable'],
    ['snoozed_until', 'datetime', 'nullable'],
    ['snooze_occurrences', 'integer', 'nullable'],
    ['resolved_at', 'datetime', 'nullable'],
    ['resolved_by_id', 'integer', 'nullable'],
    ['regressed_at', 'datetime', 'nullable'],
    ['resolved_in_release', 'string', 'nullable'],
    ['updated_at', 'datetime'],
  ],
  values: { status: TRIAGE_STATUSES },
} as const satisfies ResourceDefinition;

/** A note on an error (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidnotes): plain text. */
export const noteResource = {
  root: 'note',
  plural: 'notes',
  fields: [
    ['id', 'integer'],
    ['error_id', 'integer'],
    ['author_id', 'integer', 'nullable'],
    ['body', 'string'],
    ['created_at', 'datetime'],
  ],
} as const satisfies ResourceDefinition;

/** One entry of an error's activity, oldest first (docs/api.md#get-sysadmin_toolsinfrastructureerrorsidactivity). */
export const activityResource = {
  root: 'activity',
  plural: 'activities',
  fields: [
    ['id', 'integer'],
    ['at', 'datetime'],
    ['actor_id', 'integer', 'nullable'],
    ['action', 'string'],
    ['details', 'json'],
  ],
  values: { action: ['first_seen', 'status', 'assign', 'note', 'note_deleted', 'report', 'regression'] },
} as const satisfies ResourceDefinition;
