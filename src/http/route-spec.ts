import type { ResourceDefinition, ScalarType } from './render/resource-definition.js';

/**
 * Every endpoint cmi serves is declared once, as a row of this shape beside its handler in its
 * feature's routes file; app/api-routes.ts gathers them. The OpenAPI document
 * (openapi/openapi-document.ts) is generated from the rows and the resource definitions, and buildApp
 * refuses to start when a registered route has no row or a row has no route (docs/api.md#openapi).
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'OPTIONS';

/** Who may call it (docs/security.md#who-may-do-what). */
export type Who = 'anyone' | 'any user' | 'metrics token' | 'ingest key' | `holders of ${string}`;

/** A query parameter: its type and, when it takes only some values, which. */
export interface QueryParameter {
  name: string;
  type: ScalarType;
  values?: readonly string[];
  description: string;
}

/** What a successful answer carries. */
export type Answer =
  | { record: ResourceDefinition }
  | { list: ResourceDefinition }
  | { count: string }
  | { empty: true }
  | { document: 'openapi' | 'html' | 'css' | 'prometheus' }
  /** The Sentry protocol's own answer: `{"id": "<event_id>"}` (or `{}`); its errors `{"detail": "..."}` (docs/sentry.md). */
  | { sentry: true }
  /** A log source's own answers (docs/log-sources.md): OTLP/HTTP's Export*ServiceResponse, or the journal upload's `OK.`. */
  | { logSource: 'otlp' | 'journald' };

export interface RouteSpec {
  method: Method;
  /** The fastify pattern, as registered: no extension, no pagination segments. */
  path: string;
  summary: string;
  who: Who;
  /** Served in JSON and XML through `.json`/`.xml` (false: one fixed format, one path). */
  formats: boolean;
  /** The one extension a fixed-format route answers to (`/openapi.json`). */
  extension?: string;
  /** Takes the seven pagination forms and answers the pagination headers (docs/api.md#pagination). */
  paginated?: boolean;
  query?: readonly QueryParameter[];
  /** Request body fields: JSON or XML, with or without the root. */
  body?: { root: string; fields: ReadonlyArray<readonly [name: string, type: ScalarType | 'string[]' | 'id[]']>; required?: readonly string[] };
  /** Successful statuses and what each answers. */
  answers: Readonly<Record<number, Answer>>;
  /** Headers a successful answer carries besides the common ones. */
  location?: boolean;
}

/**
 * What is served beside the API, outside the table and the document: `/`, which sends a browser to the
 * console and answers anything else as an unknown path, `/favicon.ico`, and the console's HTML pages (docs/console.md).
 */
export const isBesideApi = (url: string): boolean => url === '/' || url === '/favicon' || url === '/console' || url.startsWith('/console/');
