import { readFileSync } from 'node:fs';

/** cmi's version as package.json states it, such as `1.0.0` (what `cmi --version` prints). */
export function cmiReleaseVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/**
 * cmi's own version, `<major>.<minor>`, from package.json: what the OpenAPI document and cmi's recorded
 * faults carry. `GET /version` reports the OnApp version instead (CMI_ONAPP_VERSION, docs/api.md#version),
 * since OnApp clients choose their fields and paths by it.
 */
export function cmiVersion(): string {
  const version = cmiReleaseVersion();
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) throw new Error(`package.json version ${JSON.stringify(version)} is not a dotted number`);
  return `${match[1]}.${match[2]}`;
}
