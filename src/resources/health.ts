import type { ResourceDefinition } from './definition.js';

/** `{"status": "ok"}`; `<health><status>ok</status></health>`. */
export const healthResource = {
  root: 'health',
  plural: 'health',
  fields: [['status', 'string']],
  unwrappedJson: true,
} as const satisfies ResourceDefinition;
