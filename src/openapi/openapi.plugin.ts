import type { FastifyInstance } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { OPENAPI_ROUTES, openApiRoutes } from './openapi.routes.js';

/** What the OpenAPI document is made of (docs/architecture.md#how-a-feature-registers-itself). */
export interface OpenApiPieces {
  /** CMI_OPENAPI: off, there are no such routes. */
  on: boolean;
  /** cmi's own version, which the document carries. */
  version: string;
}

/**
 * The OpenAPI document and the API reference (docs/api.md#openapi): gives its rows of the route table
 * (none when off); registers them. The document describes the whole route table, which the app
 * gathers from every feature's rows, so `register` is handed it.
 */
export function openApiPlugin({ on, version }: OpenApiPieces) {
  return {
    routes: on ? OPENAPI_ROUTES : [],
    async register(app: FastifyInstance, routes: readonly RouteSpec[]): Promise<void> {
      if (on) await app.register(openApiRoutes, { version, routes });
    },
  };
}
