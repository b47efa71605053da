import { readFileSync } from 'node:fs';

/**
 * The installation's version, `<major>.<minor>` (docs/api.md#version), from package.json. OnApp clients
 * compare it as a dotted number, so the patch level is left out.
 */
export function installationVersion(): string {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const match = /^(\d+)\.(\d+)/.exec(version);
  if (!match) throw new Error(`package.json version ${JSON.stringify(version)} is not a dotted number`);
  return `${match[1]}.${match[2]}`;
}
