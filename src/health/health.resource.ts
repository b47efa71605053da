import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** `{"status": "ok"}`; `<health><status>ok</status></health>`. */
export const healthResource = {
  root: 'health',
  plural: 'health',
  fields: [['status', 'string']],
  values: { status: ['ok', 'migrations pending', 'database unreachable', 'database refuses writes', 'database not answering'] },
  unwrappedJson: true,
} as const satisfies ResourceDefinition;
