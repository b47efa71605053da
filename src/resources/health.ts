import type { ResourceDefinition } from './definition.js';

/** `{"status": "ok"}`; `<health><status>ok</status></health>`. */
export const healthResource: ResourceDefinition = {
  root: 'health',
  plural: 'health',
  fields: [['status', 'string']],
  unwrappedJson: true,
};
