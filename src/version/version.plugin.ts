import type { FastifyInstance } from 'fastify';
import { cmiReleaseVersion, cmiVersion } from './version.js';
import { versionRoutes } from './version.routes.js';

/**
 * The versions (docs/api.md#version): gives cmi's own, `<major>.<minor>` (what recorded faults and
 * the OpenAPI document carry), and its release as package.json states it, read only when asked
 * (the metrics' `cmi_build_info`); registers `GET /version`, which answers `onappVersion`.
 */
export function versionPlugin({ onappVersion }: { onappVersion: string }) {
  return {
    version: cmiVersion(),
    releaseVersion: cmiReleaseVersion,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(versionRoutes, { version: onappVersion });
    },
  };
}
