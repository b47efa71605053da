import { deliveryResource } from '../alerts/delivery.resource.js';
import type { ResourceDefinition, ScalarType } from './resource-definition.js';
import { breakdownGroupResource, histogramBucketResource, occurrenceResource } from '../tracker/error-details.resource.js';
import { healthResource } from '../health/health.resource.js';
import { infrastructureErrorResource } from '../tracker/infrastructure-error.resource.js';
import { userResource } from '../users/user.resource.js';
import { versionResource } from '../version/version.resource.js';

/**
 * Every endpoint cmi serves, declared once: the OpenAPI document (openapi/openapi-document.ts) is generated from
 * this table and the resource definitions, and buildApp refuses to start when a registered route is
 * missing here or a row here has no route (docs/api.md#openapi). The handlers live in server/routes/.
 */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Who may call it (docs/security.md#who-may-do-what). */
export type Who = 'anyone' | 'any user' | 'administrators' | 'administrators; a user for itself' | 'metrics token';

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
  | { document: 'openapi' | 'html' | 'css' | 'prometheus' };

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
  body?: { root: string; fields: ReadonlyArray<readonly [name: string, type: ScalarType | 'string[]']>; required?: readonly string[] };
  /** Successful statuses and what each answers. */
  answers: Readonly<Record<number, Answer>>;
  /** Headers a successful answer carries besides the common ones. */
  location?: boolean;
}

const ERRORS = '/sysadmin_tools/infrastructure/errors';

const USER_FIELDS = [
  ['login', 'string'],
  ['email', 'string'],
  ['password', 'string'],
  ['first_name', 'string'],
  ['last_name', 'string'],
  ['time_zone', 'string'],
  ['locale', 'string'],
  ['role', 'string'],
] as const;

const ERROR_FILTERS: readonly QueryParameter[] = [
  { name: 'sort', type: 'string', values: ['updated_at', 'created_at', 'counter'], description: 'the order (default updated_at); ties by id' },
  { name: 'direction', type: 'string', values: ['desc', 'asc'], description: 'default desc' },
  { name: 'reported', type: 'string', values: ['true', 'false'], description: 'errors reported, or not' },
  { name: 'error_class', type: 'string', description: 'errors of exactly that class' },
  { name: 'q', type: 'string', description: 'class or message contains the text, in any case' },
  { name: 'since', type: 'datetime', description: 'updated_at at or after' },
  { name: 'until', type: 'datetime', description: 'updated_at at or before' },
  { name: 'host', type: 'string', description: 'at least one occurrence from that host' },
  { name: 'component', type: 'string', description: 'at least one occurrence for that component' },
];

const DELETE_FILTERS: readonly QueryParameter[] = [
  ...ERROR_FILTERS.filter((filter) => filter.name !== 'sort' && filter.name !== 'direction'),
  { name: 'all', type: 'string', values: ['true', 'false'], description: 'true deletes every error when no filter is given' },
];

/**
 * What is served beside the API, outside the table and the document: `/`, which sends a browser to the
 * console and answers anything else as an unknown path, and the console's HTML pages (docs/console.md).
 */
export const isBesideApi = (url: string): boolean => url === '/' || url === '/console' || url.startsWith('/console/');

export const ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/version', summary: 'The installation\'s version; 200 only for valid credentials', who: 'any user', formats: true, answers: { 200: { record: versionResource } } },
  { method: 'GET', path: '/users', summary: 'A page of users (a user sees only itself)', who: 'any user', formats: true, paginated: true, answers: { 200: { list: userResource } } },
  {
    method: 'POST', path: '/users', summary: 'Creates a user', who: 'administrators', formats: true, location: true,
    body: { root: 'user', fields: USER_FIELDS, required: ['login', 'email', 'password'] },
    answers: { 201: { record: userResource } },
  },
  { method: 'GET', path: '/users/:id', summary: 'One user', who: 'administrators; a user for itself', formats: true, answers: { 200: { record: userResource } } },
  {
    method: 'PUT', path: '/users/:id', summary: 'Changes the fields the body names (a user changing its own password sends current_password)', who: 'administrators; a user for itself', formats: true,
    body: { root: 'user', fields: [...USER_FIELDS, ['current_password', 'string']] },
    answers: { 204: { empty: true } },
  },
  { method: 'DELETE', path: '/users/:id', summary: 'Marks the user deleted; a second time removes it', who: 'administrators', formats: true, answers: { 204: { empty: true } } },
  { method: 'POST', path: '/users/:id/suspend', summary: 'Suspends the user', who: 'administrators', formats: true, answers: { 200: { record: userResource } } },
  { method: 'POST', path: '/users/:id/activate', summary: 'Activates the user', who: 'administrators', formats: true, answers: { 200: { record: userResource } } },
  { method: 'POST', path: '/users/:id/make_new_api_key', summary: 'A new API key, shown once in api_key', who: 'administrators; a user for itself', formats: true, answers: { 200: { record: userResource } } },
  { method: 'DELETE', path: '/session', summary: 'Ends the cookie\'s session and clears the cookie', who: 'any user', formats: true, answers: { 204: { empty: true } } },
  { method: 'GET', path: ERRORS, summary: 'A page of infrastructure errors, filtered and sorted', who: 'administrators', formats: true, paginated: true, query: ERROR_FILTERS, answers: { 200: { list: infrastructureErrorResource } } },
  {
    method: 'POST', path: ERRORS, summary: 'Records a report of an error: 201 for a new one, 200 for a known one', who: 'administrators', formats: true, location: true,
    body: {
      root: 'infrastructure_error',
      fields: [['error_class', 'string'], ['message', 'string'], ['backtrace', 'string[]'], ['fingerprint', 'string'], ['occurred_at', 'datetime'], ['count', 'integer'], ['host', 'string'], ['component', 'string'], ['request_id', 'string'], ['context', 'json']],
      required: ['error_class'],
    },
    answers: { 200: { record: infrastructureErrorResource }, 201: { record: infrastructureErrorResource } },
  },
  { method: 'DELETE', path: ERRORS, summary: 'Deletes the errors the filters select', who: 'administrators', formats: true, query: DELETE_FILTERS, answers: { 200: { count: 'deleted' } } },
  { method: 'GET', path: `${ERRORS}/:id`, summary: 'One infrastructure error', who: 'administrators', formats: true, answers: { 200: { record: infrastructureErrorResource } } },
  { method: 'DELETE', path: `${ERRORS}/:id`, summary: 'Deletes the error and all kept about it', who: 'administrators', formats: true, answers: { 204: { empty: true } } },
  { method: 'GET', path: `${ERRORS}/:id/occurrences`, summary: 'The occurrences the error keeps', who: 'administrators', formats: true, paginated: true, answers: { 200: { list: occurrenceResource } } },
  {
    method: 'GET', path: `${ERRORS}/:id/histogram`, summary: 'Occurrences per hour or day, zero-filled, oldest first', who: 'administrators', formats: true,
    query: [{ name: 'period', type: 'string', values: ['24h', '7d', '30d'], description: 'default 24h' }],
    answers: { 200: { list: histogramBucketResource } },
  },
  {
    method: 'GET', path: `${ERRORS}/:id/breakdown`, summary: 'Occurrences per host or component, largest first', who: 'administrators', formats: true, paginated: true,
    query: [{ name: 'by', type: 'string', values: ['host', 'component'], description: 'default host' }],
    answers: { 200: { list: breakdownGroupResource } },
  },
  { method: 'POST', path: `${ERRORS}/:id/report`, summary: 'Delivers the error to the report webhook, then marks it reported (502 when not taken)', who: 'administrators', formats: true, answers: { 200: { record: infrastructureErrorResource } } },
  {
    method: 'GET', path: '/sysadmin_tools/infrastructure/deliveries', summary: 'Webhook deliveries: reports and alerts', who: 'administrators', formats: true, paginated: true,
    query: [{ name: 'state', type: 'string', values: ['pending', 'failed', 'delivered', 'all'], description: 'default all' }],
    answers: { 200: { list: deliveryResource } },
  },
  { method: 'GET', path: '/health/live', summary: 'The process is up', who: 'anyone', formats: true, answers: { 200: { record: healthResource } } },
  { method: 'GET', path: '/health/ready', summary: 'The database answers and is migrated: 200, else 503', who: 'anyone', formats: true, answers: { 200: { record: healthResource }, 503: { record: healthResource } } },
];

/** Routes that exist only when their setting turns them on (docs/operations.md#observe). */
export const OPENAPI_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/openapi', extension: 'json', summary: 'This document', who: 'anyone', formats: false, answers: { 200: { document: 'openapi' } } },
  { method: 'GET', path: '/docs', summary: 'The API reference, rendered from this document', who: 'anyone', formats: false, answers: { 200: { document: 'html' } } },
  { method: 'GET', path: '/docs/reference', extension: 'css', summary: 'The reference page\'s style sheet', who: 'anyone', formats: false, answers: { 200: { document: 'css' } } },
];

export const METRICS_ROUTE: RouteSpec = {
  method: 'GET', path: '/metrics', summary: 'Prometheus metrics of this process (bearer CMI_METRICS_TOKEN)', who: 'metrics token', formats: false, answers: { 200: { document: 'prometheus' } },
};

