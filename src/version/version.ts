import { readFileSync } from 'node:fs';

/**
 * cmi's own version, `<major>.<minor>`, from package.json: what the OpenAPI document and cmi's recorded
 * faults carry. `GET /version` reports the OnApp version instead (CMI_ONAPP_VERSION, docs/api.md#version),
 * since OnApp clients choose their fields and paths by it.
 */
export function cmiVersion(): string {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) throw new Error(`package.json version ${JSON.stringify(version)} is not a dotted number`);
  return `${match[1]}.${match[2]}`;
}
