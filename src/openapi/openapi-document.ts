import type { FieldDefinition, ResourceDefinition } from '../http/render/resource-definition.js';
import type { Answer, RouteSpec } from '../http/route-spec.js';

/**
 * The OpenAPI 3.1 document of docs/api.md#openapi, generated from the route table (http/route-spec.ts) and the resource
 * definitions (one source: a field added to a resource changes the JSON, the XML and this together).
 * The XML bodies are described in the shape an XML reader that honours `type="..."` and `nil="true"`
 * gives them: a record is an object of its fields, `type="array"` an array of its children, a
 * repeated element (`<error>`) an array.
 */
type Schema = Record<string, unknown>;

const DATETIME: Schema = { type: 'string', format: 'date-time', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\+00:00$' };
const SEGMENT_FORMS: ReadonlyArray<readonly string[]> = [[], ['page'], ['per_page'], ['page', 'per_page'], ['per_page', 'page']];

/** `infrastructure_error` -> `InfrastructureError`. */
function schemaName(resource: ResourceDefinition, format: 'json' | 'xml'): string {
  const name = (resource.schema ?? resource.root).split('_').map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`).join('');
  return format === 'json' ? name : `${name}Xml`;
}

function ref(name: string): Schema {
  return { $ref: `#/components/schemas/${name}` };
}

/** The OpenAPI path of a route: `/users/:id` -> `/users/{id}.json`. */
export function documentPath(route: RouteSpec, format: 'json' | 'xml' | undefined): string {
  const path = route.path.replace(/:(\w+)/g, '{$1}');
  if (route.formats) return `${path}.${format ?? 'json'}`;
  return route.extension === undefined ? path : `${path}.${route.extension}`;
}

function withNull(schema: Schema, nullable: boolean): Schema {
  return nullable ? { anyOf: [schema, { type: 'null' }] } : schema;
}

function fieldSchema(resource: ResourceDefinition, [name, type, marker]: FieldDefinition, format: 'json' | 'xml', schemas: Map<string, Schema>): Schema {
  const nullable = marker === 'nullable';
  if (typeof type === 'object') {
    const item = recordSchema(type.arrayOf, format, schemas);
    const items = format === 'json' ? wrappedRecord(type.arrayOf, item) : { ...item, xml: { name: type.arrayOf.root } };
    return withNull({ type: 'array', items, ...(format === 'xml' ? { xml: { name, wrapped: true } } : {}) }, nullable);
  }
  const values = resource.values?.[name];
  const scalar: Schema =
    type === 'integer' ? { type: 'integer' }
      : type === 'decimal' ? { type: 'number' }
      : type === 'boolean' ? { type: 'boolean' }
        : type === 'datetime' ? DATETIME
          : type === 'json' ? (format === 'json' ? { anyOf: [{ type: 'object' }, { type: 'array' }], description: 'a JSON object (a list: an array)' } : { type: 'string', description: 'a JSON object or array, as text' })
            : values !== undefined ? { type: 'string', enum: values } : { type: 'string' };
  return withNull(scalar, nullable);
}

/** The schema of one record's fields, kept in components and referred to. */
function recordSchema(resource: ResourceDefinition, format: 'json' | 'xml', schemas: Map<string, Schema>): Schema {
  const name = schemaName(resource, format);
  if (!schemas.has(name)) {
    schemas.set(name, {});
    const properties: Record<string, Schema> = {};
    for (const field of resource.fields) properties[field[0]] = fieldSchema(resource, field, format, schemas);
    schemas.set(name, {
      type: 'object',
      properties,
      required: resource.fields.map(([field]) => field).filter((field) => !resource.optional?.includes(field)),
      additionalProperties: false,
      ...(format === 'xml' ? { xml: { name: resource.root } } : {}),
    });
  }
  return ref(name);
}

function wrappedRecord(resource: ResourceDefinition, record: Schema): Schema {
  if (resource.unwrappedJson) return record;
  return { type: 'object', properties: { [resource.root]: record }, required: [resource.root], additionalProperties: false };
}

/** A whole body in the shape it is read in: XML keeps its root element as the one key. */
function bodySchema(answer: Answer, format: 'json' | 'xml', schemas: Map<string, Schema>): Schema | undefined {
  if ('record' in answer) {
    const record = recordSchema(answer.record, format, schemas);
    return format === 'json' ? wrappedRecord(answer.record, record) : rooted(answer.record.root, record);
  }
  if ('list' in answer) {
    const record = recordSchema(answer.list, format, schemas);
    if (format === 'json') return { type: 'array', items: wrappedRecord(answer.list, record) };
    return rooted(answer.list.plural, { type: 'array', items: record, xml: { name: answer.list.plural, wrapped: true } });
  }
  if ('count' in answer) return rooted(answer.count, { type: 'integer', minimum: 0 });
  return undefined;
}

function rooted(root: string, schema: Schema): Schema {
  return { type: 'object', properties: { [root]: schema }, required: [root], additionalProperties: false };
}

const MEDIA = { json: 'application/json', xml: 'application/xml' } as const;
const DOCUMENT_MEDIA = { openapi: 'application/json', html: 'text/html', css: 'text/css', prometheus: 'text/plain' } as const;

function header(description: string, schema: Schema = { type: 'string' }): Schema {
  return { description, schema };
}

const HEADERS: Record<string, Schema> = {
  'X-Request-Id': header('The incoming one when it is 1-255 characters of [A-Za-z0-9_@-], else a new UUID'),
  'X-Runtime': header('Seconds the request took, six decimals', { type: 'string', pattern: '^\\d+\\.\\d{6}$' }),
  Status: header('The HTTP status and its reason, e.g. `200 OK`'),
  'Cache-Control': header('`max-age=0, private, must-revalidate` on a successful GET; `no-cache` otherwise'),
  ETag: header('On a successful GET: `W/"<sha1 of the body>"`; a matching If-None-Match gets 304'),
  'X-Total': header('All items of the list', { type: 'integer', minimum: 0 }),
  'X-Limit': header('The effective per_page', { type: 'integer', minimum: 1 }),
  'X-Page': header('The page answered', { type: 'integer', minimum: 1 }),
  Link: header('RFC 8288 links rel first, prev, next, last, in the request\'s path style'),
  Location: header('The new record\'s path'),
  'Set-Cookie': header('`_cmi_session=<token>; path=/; HttpOnly; SameSite=Lax` after a credential login'),
  'WWW-Authenticate': header('`Basic realm="cmi"`'),
  'Retry-After': header('Seconds to wait', { type: 'integer', minimum: 0 }),
  'X-Sentry-Rate-Limits': header('`<seconds>::key`: the Sentry SDKs stop sending for that long'),
  'Access-Control-Allow-Origin': header('The request\'s Origin, when the ingest key allows it'),
};

function headerRefs(names: readonly string[]): Record<string, Schema> {
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

const COMMON = ['X-Request-Id', 'X-Runtime', 'Status', 'Cache-Control'];

/** The error responses, in one format: `{"errors":{"<field>":["..."]}}` / `<errors><error>...</error></errors>`. */
function errorResponses(): Record<string, Schema> {
  const out: Record<string, Schema> = {};
  const kinds = {
    Error: { description: 'An error; the body names the problem', headers: COMMON },
    Unauthorized: { description: 'No or wrong credentials', headers: [...COMMON, 'WWW-Authenticate'] },
    TooManyRequests: { description: 'Too many failed logins or requests', headers: [...COMMON, 'Retry-After'] },
  };
  for (const [kind, { description, headers }] of Object.entries(kinds)) {
    const json = { [MEDIA.json]: { schema: ref('Errors') } };
    const xml = { [MEDIA.xml]: { schema: ref('ErrorsXml') } };
    out[`${kind}Json`] = { description, headers: headerRefs(headers), content: json };
    out[`${kind}Xml`] = { description, headers: headerRefs(headers), content: xml };
    // A route of one fixed format (`/openapi.json`) answers errors in the format the request asked for.
    out[kind] = { description, headers: headerRefs(headers), content: { ...json, ...xml } };
  }
  return out;
}

const ERROR_SCHEMAS: Record<string, Schema> = {
  Errors: {
    type: 'object',
    properties: { errors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 }, minProperties: 1 } },
    required: ['errors'],
    additionalProperties: false,
  },
  ErrorsXml: rooted('errors', {
    type: 'object',
    properties: { error: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', xml: { name: 'error' } }, minItems: 2 }] } },
    required: ['error'],
    additionalProperties: false,
    xml: { name: 'errors' },
  }),
};

const SENTRY_ANSWER: Schema = { type: 'object', properties: { id: { type: 'string', pattern: '^[0-9a-f]{32}$' } }, additionalProperties: false };
const SENTRY_ERROR: Schema = { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'], additionalProperties: false };

/** The Sentry protocol's error answers (docs/sentry.md#answers): `{"detail": "..."}`; a fault of cmi is answered as any other. */
function sentryErrorResponses(): Record<string, Schema> {
  const detail = (description: string, headers: readonly string[]) => ({ description, headers: headerRefs(headers), content: { [MEDIA.json]: { schema: SENTRY_ERROR } } });
  return {
    400: detail('A body that cannot be read (garbage, broken compression, an envelope that lies)', COMMON),
    401: detail('No ingest key, or not this one\'s', COMMON),
    403: detail('A disabled key, or an origin the key does not allow', COMMON),
    404: detail('No such path', COMMON),
    413: detail('A body or event beyond the limits', COMMON),
    415: detail('A Content-Encoding other than gzip, deflate or identity', COMMON),
    429: detail('Beyond the key\'s rate limit', [...COMMON, 'Retry-After', 'X-Sentry-Rate-Limits']),
    500: errorRef('Error', 'either'),
    503: detail('cmi cannot write now', [...COMMON, 'Retry-After']),
    default: detail('Another refusal', COMMON),
  };
}

const OTLP_STATUS: Schema = { type: 'object', description: 'google.rpc.Status', properties: { code: { type: 'integer' }, message: { type: 'string' } } };
const OTLP_MEDIA = { 'application/x-protobuf': { schema: { type: 'string', format: 'binary' } }, [MEDIA.json]: { schema: { type: 'object' } } };

/**
 * A log source's endpoint (docs/log-sources.md): OTLP/HTTP (`Authorization: Bearer <public key>`, a
 * google.rpc.Status for every refusal) or the journal upload (the key in the path, text answers).
 */
function logSourceOperation(route: RouteSpec, kind: 'otlp' | 'journald'): Schema {
  const id = `${route.method.toLowerCase()}${route.path.split(/[/:_]+/).filter(Boolean).map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`).join('')}`;
  if (kind === 'otlp') {
    const status = (description: string, headers: readonly string[] = COMMON) => ({
      description, headers: headerRefs(headers), content: { 'application/x-protobuf': { schema: { type: 'string', format: 'binary' } }, [MEDIA.json]: { schema: OTLP_STATUS } },
    });
    return {
      operationId: id,
      summary: route.summary,
      description: 'Who: an OTLP ingest key (docs/log-sources.md#opentelemetry-otlphttp), as `Authorization: Bearer <public_key>`.',
      tags: ['opentelemetry'],
      security: [{ otlpKey: [] }],
      requestBody: { required: true, content: OTLP_MEDIA },
      responses: {
        200: { description: 'Taken: an Export*ServiceResponse, with partial_success when some were rejected', headers: headerRefs(COMMON), content: OTLP_MEDIA },
        400: status('A body that does not decode'),
        401: status('No OTLP ingest key, or not one that may send from this address'),
        413: status('A body beyond the limits'),
        415: status('A Content-Type other than application/x-protobuf or application/json'),
        429: status('Beyond the key\'s rate limit: send again after Retry-After', [...COMMON, 'Retry-After']),
        503: status('cmi cannot write now: send again after Retry-After', [...COMMON, 'Retry-After']),
        500: errorRef('Error', 'either'),
      },
    };
  }
  const text = (description: string, headers: readonly string[] = COMMON) => ({ description, headers: headerRefs(headers), content: { 'text/plain': { schema: { type: 'string' } } } });
  return {
    operationId: id,
    summary: route.summary,
    description: 'Who: a journald ingest key, named in the path (systemd-journal-upload sends no header of its own; docs/log-sources.md#journald-systemd-journal-upload).',
    tags: ['journald'],
    security: [],
    parameters: [
      { name: 'key_id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 }, description: 'the journald ingest key\'s id' },
      { name: 'public_key', in: 'path', required: true, schema: { type: 'string' }, description: 'the journald ingest key\'s public_key' },
    ],
    requestBody: { required: true, content: { 'application/vnd.fdo.journal': { schema: { type: 'string', format: 'binary', description: 'the journal export format' } } } },
    responses: {
      202: text('Every entry was stored: `OK.`'),
      400: text('A body that is not the journal export format (the entries before the mistake are stored)'),
      401: text('The path names no enabled journald key that may upload from here'),
      415: text('A Content-Type other than application/vnd.fdo.journal'),
      417: text('A body that ends inside an entry'),
      429: text('Beyond the key\'s rate limit', [...COMMON, 'Retry-After']),
      503: text('cmi cannot write now', [...COMMON, 'Retry-After']),
      500: errorRef('Error', 'either'),
    },
  };
}

function errorRef(kind: string, format: 'json' | 'xml' | 'either'): Schema {
  return { $ref: `#/components/responses/${kind}${format === 'json' ? 'Json' : format === 'xml' ? 'Xml' : ''}` };
}

function parameters(route: RouteSpec, segments: readonly string[]): Schema[] {
  const out: Schema[] = [];
  for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
    out.push({ name, in: 'path', required: true, schema: { type: 'integer', minimum: 1 }, description: 'a record\'s id; anything else is 404' });
  }
  if (route.paginated) {
    for (const name of ['page', 'per_page']) {
      const description = name === 'page' ? 'the page, from 1' : 'items a page (default and maximum configurable)';
      const schema = { type: 'integer', minimum: 1 };
      // Given once: as a path segment or in the query, not both (docs/api.md#pagination).
      out.push(segments.includes(name) ? { name, in: 'path', required: true, schema, description } : { name, in: 'query', required: false, schema, description });
    }
  }
  for (const parameter of route.query ?? []) {
    const schema = parameter.type === 'datetime' ? { type: 'string', description: 'any form of docs/api.md#datetimes' }
      : parameter.values ? { type: 'string', enum: parameter.values } : { type: 'string' };
    out.push({ name: parameter.name, in: 'query', required: false, schema, description: parameter.description });
  }
  return out;
}

function requestBody(route: RouteSpec): Schema | undefined {
  if (!route.body) return undefined;
  const { root, fields, required = [] } = route.body;
  const properties: Record<string, Schema> = {};
  for (const [name, type] of fields) {
    properties[name] = type === 'string[]' ? { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] }
      // Ids as numbers or digit strings; XML's <name type="array"><item>1</item></name> arrives as an object.
      : type === 'id[]' ? { anyOf: [{ type: 'array', items: { anyOf: [{ type: 'integer' }, { type: 'string' }] } }, { type: 'object' }, { type: 'string' }] }
      : type === 'datetime' ? { type: 'string', description: 'any form of docs/api.md#datetimes' }
        : type === 'json' ? { anyOf: [{ type: 'object' }, { type: 'string' }] }
          : type === 'integer' ? { type: 'integer' } : type === 'decimal' ? { anyOf: [{ type: 'number' }, { type: 'string' }] }
            : type === 'boolean' ? { anyOf: [{ type: 'boolean' }, { type: 'string' }] } : { anyOf: [{ type: 'string' }, { type: 'null' }] };
  }
  const record: Schema = { type: 'object', properties, ...(required.length > 0 ? { required } : {}), xml: { name: root } };
  const schema = { anyOf: [{ type: 'object', properties: { [root]: record }, required: [root] }, record] };
  return { required: true, content: { 'application/json': { schema }, 'application/xml': { schema: record } } };
}

function successResponse(route: RouteSpec, status: number, answer: Answer, format: 'json' | 'xml', schemas: Map<string, Schema>): Schema {
  const headers = [...COMMON];
  if (route.method === 'GET' && status === 200) headers.push('ETag');
  if (route.paginated) headers.push('X-Total', 'X-Limit', 'X-Page', 'Link');
  if (route.location && status === 201) headers.push('Location');
  if (route.who !== 'anyone' && route.who !== 'metrics token' && route.who !== 'ingest key') headers.push('Set-Cookie');
  const response: Schema = { description: status === 204 ? 'Done; no body' : route.summary, headers: headerRefs(headers) };
  if ('sentry' in answer) {
    response.content = { [MEDIA.json]: { schema: SENTRY_ANSWER } };
    if (route.method === 'OPTIONS') delete response.content;
    (response.headers as Record<string, Schema>)['Access-Control-Allow-Origin'] = { $ref: '#/components/headers/Access-Control-Allow-Origin' };
  } else if ('document' in answer) {
    response.content = { [DOCUMENT_MEDIA[answer.document]]: { schema: answer.document === 'openapi' ? { type: 'object' } : { type: 'string' } } };
  } else {
    const schema = bodySchema(answer, format, schemas);
    if (schema) response.content = { [MEDIA[format]]: { schema } };
  }
  return response;
}

/** The first segment of the path names its group: users, infrastructure (for sysadmin_tools), health ... */
export function tagOf(route: RouteSpec): string {
  const first = route.path.split('/')[1] ?? '';
  return first === 'sysadmin_tools' ? 'infrastructure' : first;
}

function operation(route: RouteSpec, format: 'json' | 'xml', segments: readonly string[], schemas: Map<string, Schema>): Schema {
  const logSource = Object.values(route.answers).find((answer): answer is { logSource: 'otlp' | 'journald' } => 'logSource' in answer);
  if (logSource !== undefined) return logSourceOperation(route, logSource.logSource);
  const responses: Record<string, Schema> = {};
  for (const [status, answer] of Object.entries(route.answers)) responses[status] = successResponse(route, Number(status), answer, format, schemas);
  if (route.who === 'ingest key') {
    return {
      operationId: `${route.method.toLowerCase()}${route.path.split(/[/:_]+/).filter(Boolean).map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`).join('')}`,
      summary: route.summary,
      description: 'Who: an ingest key (docs/sentry.md), in X-Sentry-Auth, the query (sentry_key) or the envelope header\'s dsn.',
      tags: [tagOf(route)],
      security: [{ sentryKey: [] }, { sentryAuth: [] }],
      parameters: parameters(route, segments),
      ...(route.method === 'POST' ? { requestBody: { required: true, content: { '*/*': { schema: { type: 'string', description: 'an envelope, or one event as JSON; plain, gzip, deflate, or base64 of zlib' } } } } } : {}),
      responses: { ...responses, ...sentryErrorResponses() },
    };
  }
  const errorFormat = route.formats ? format : 'either';
  if (route.method === 'GET') responses['304'] = { description: 'Not modified (If-None-Match matched the ETag)', headers: headerRefs([...COMMON, 'ETag']) };
  const authenticated = route.who !== 'anyone';
  if (authenticated) responses['401'] = errorRef('Unauthorized', errorFormat);
  if (route.who.startsWith('holders of')) responses['403'] = errorRef('Error', errorFormat);
  responses['404'] = errorRef('Error', errorFormat);
  responses['406'] = errorRef('Error', errorFormat);
  if (route.paginated || route.query || route.body) responses['422'] = errorRef('Error', errorFormat);
  if (authenticated) responses['429'] = errorRef('TooManyRequests', errorFormat);
  responses['500'] = errorRef('Error', errorFormat);
  responses['503'] ??= errorRef('Error', errorFormat);
  responses.default = errorRef('Error', errorFormat);
  const suffix = [format, ...segments].map((part) => part.replace(/_(\w)/g, (_all, c: string) => c.toUpperCase()).replace(/^\w/, (c) => c.toUpperCase())).join('');
  const id = route.path.split(/[/:_]+/).filter(Boolean).map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`).join('');
  const parameterList = parameters(route, segments);
  const body = requestBody(route);
  return {
    operationId: `${route.method.toLowerCase()}${id || 'Root'}${route.formats ? suffix : ''}`,
    summary: route.summary,
    description: `Who: ${route.who}.`,
    tags: [tagOf(route)],
    ...(route.who === 'anyone' ? { security: [] } : route.who === 'metrics token' ? { security: [{ metricsToken: [] }] } : {}),
    ...(parameterList.length > 0 ? { parameters: parameterList } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

export interface DocumentOptions {
  version: string;
  routes: readonly RouteSpec[];
}

/** The document, as a plain object (serialised once by the caller). */
export function openApiDocument({ version, routes }: DocumentOptions): Schema {
  const schemas = new Map<string, Schema>();
  const paths: Record<string, Record<string, Schema>> = {};
  for (const route of routes) {
    for (const format of route.formats ? (['json', 'xml'] as const) : (['json'] as const)) {
      for (const segments of route.paginated ? SEGMENT_FORMS : [[]]) {
        const path = documentPath(route, format) + segments.map((name) => `/${name}/{${name}}`).join('');
        (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, format, segments, schemas);
      }
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'cmi',
      version,
      description: 'The cloud-management API of cmi, compatible with OnApp control-panel clients. Every path is served as `.json` and `.xml`; lists also take their pagination as path segments.',
    },
    servers: [{ url: '/' }],
    security: [{ basic: [] }, { session: [] }],
    tags: [...new Set(routes.map(tagOf))].map((name) => ({ name })),
    paths,
    components: {
      schemas: { ...Object.fromEntries([...schemas].sort(([a], [b]) => a.localeCompare(b))), ...ERROR_SCHEMAS },
      responses: errorResponses(),
      headers: HEADERS,
      securitySchemes: {
        basic: { type: 'http', scheme: 'basic', description: 'login (or email) and password, or email (or login) and an API key' },
        session: { type: 'apiKey', in: 'cookie', name: '_cmi_session', description: 'set after a credential login' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'CMI_METRICS_TOKEN' },
        sentryKey: { type: 'apiKey', in: 'query', name: 'sentry_key', description: 'an ingest key\'s public_key (docs/sentry.md)' },
        sentryAuth: { type: 'apiKey', in: 'header', name: 'X-Sentry-Auth', description: '`Sentry sentry_key=<public_key>, sentry_version=7, ...`' },
        otlpKey: { type: 'http', scheme: 'bearer', description: 'an OTLP ingest key\'s public_key (docs/log-sources.md#opentelemetry-otlphttp)' },
      },
    },
  };
}
