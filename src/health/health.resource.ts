import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** `{"status": "ok"}`; `<health><status>ok</status></health>`. */
export const healthResource = {
  root: 'health',
  plural: 'health',
  fields: [['status', 'string']],
  values: { status: ['ok', 'migrations pending', 'database unreachable', 'database refuses writes', 'database not answering'] },
  unwrappedJson: true,
} as const satisfies ResourceDefinition;

/** `/health/ready`: `{"status": "ok", "schema_version": "023_error_triage"}`; the version null when the database cannot be read. */
export const readinessResource = {
  root: 'health',
  plural: 'health',
  schema: 'readiness',
  fields: [['status', 'string'], ['schema_version', 'string', 'nullable']],
  values: healthResource.values,
  unwrappedJson: true,
} as const satisfies ResourceDefinition;
