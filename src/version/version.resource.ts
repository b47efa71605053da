import type { ResourceDefinition } from '../http/render/resource-definition.js';

/** `<cmi><version>1.0</version></cmi>` in XML; `{"version": "1.0"}` in JSON. */
export const versionResource = {
  root: 'cmi',
  plural: 'cmi',
  fields: [['version', 'string']],
  unwrappedJson: true,
} as const satisfies ResourceDefinition;
