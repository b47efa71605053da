import type { FieldType, ResourceDefinition } from '../http/render/resource-definition.js';
import type { breakdownGroupResource, histogramBucketResource, occurrenceResource } from '../tracker/error-details.resource.js';
import type { deliveryResource } from '../alerts/delivery.resource.js';
import type { ingestKeyResource } from '../ingest/ingest-key.resource.js';
import type { infrastructureErrorResource } from '../tracker/infrastructure-error.resource.js';
import type { activityResource, noteResource, triageResource } from '../tracker/triage.resource.js';
import type { roleResource, userResource } from '../users/user.resource.js';
import type { userGroupResource } from '../user-groups/user-group.resource.js';
import { parseDatetime } from './datetime.js';
import { CmiProtocolError } from './errors.js';
import type { auditEventResource } from '../audit/audit-event.resource.js';

/** The TypeScript type of a value of a field type (docs/client.md#types). */
type ValueOf<T> = T extends 'integer' | 'decimal'
  ? number
  : T extends 'string'
    ? string
    : T extends 'boolean'
      ? boolean
      : T extends 'datetime'
        ? Date
        : T extends 'json'
          ? Record<string, unknown>
          : T extends { readonly arrayOf: infer R extends ResourceDefinition }
            ? Array<RecordOf<R>>
            : never;

type FieldValue<F> = F extends readonly [string, infer T, 'nullable'] ? ValueOf<T> | null : F extends readonly [string, infer T] ? ValueOf<T> : never;

type OptionalOf<R extends ResourceDefinition> = R extends { readonly optional: ReadonlyArray<infer O> } ? O : never;
type Fields<R extends ResourceDefinition> = R['fields'][number];

/**
 * The record a resource definition describes, derived from it (src/resources/*.ts, which the server's
 * renderers read too): a field added there is a field here.
 */
export type RecordOf<R extends ResourceDefinition> = {
  [F in Fields<R> as F[0] extends OptionalOf<R> ? never : F[0]]: FieldValue<F>;
} & {
  [F in Fields<R> as F[0] extends OptionalOf<R> ? F[0] : never]?: FieldValue<F>;
};

export type User = RecordOf<typeof userResource>;
export type Role = RecordOf<typeof roleResource>;
export type UserGroup = RecordOf<typeof userGroupResource>;
export type InfrastructureError = RecordOf<typeof infrastructureErrorResource>;
export type Occurrence = RecordOf<typeof occurrenceResource>;
export type HistogramBucket = RecordOf<typeof histogramBucketResource>;
export type BreakdownGroup = RecordOf<typeof breakdownGroupResource>;
export type Delivery = RecordOf<typeof deliveryResource>;
export type IngestKey = RecordOf<typeof ingestKeyResource>;
export type Triage = RecordOf<typeof triageResource>;
export type Note = RecordOf<typeof noteResource>;
export type Activity = RecordOf<typeof activityResource>;
export type AuditEvent = RecordOf<typeof auditEventResource>;

export type Format = 'json' | 'xml';

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

function wrong(resource: ResourceDefinition, name: string, expected: string, value: unknown): CmiProtocolError {
  return new CmiProtocolError(`${resource.root}.${name} is not ${expected}: ${JSON.stringify(value)}`);
}

function decodeValue(resource: ResourceDefinition, name: string, type: FieldType, value: unknown, format: Format): unknown {
  if (typeof type === 'object') {
    if (!Array.isArray(value)) throw wrong(resource, name, 'an array', value);
    return value.map((item) => decodeRecord(type.arrayOf, format === 'json' ? unwrap(type.arrayOf, item) : item, format));
  }
  switch (type) {
    case 'integer':
      if (typeof value !== 'number' || !Number.isInteger(value)) throw wrong(resource, name, 'an integer', value);
      return value;
    case 'decimal':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw wrong(resource, name, 'a number', value);
      return value;
    case 'boolean':
      if (typeof value !== 'boolean') throw wrong(resource, name, 'a boolean', value);
      return value;
    case 'string':
      if (typeof value !== 'string') throw wrong(resource, name, 'a string', value);
      return value;
    case 'datetime': {
      if (value instanceof Date) return value;
      const date = typeof value === 'string' ? parseDatetime(value) : undefined;
      if (date === undefined) throw wrong(resource, name, 'a datetime', value);
      return date;
    }
    case 'json': {
      // XML holds the object as its JSON text (docs/api.md#formats).
      let parsed = value;
      if (typeof value === 'string') {
        try {
          parsed = JSON.parse(value) as unknown;
        } catch {
          throw wrong(resource, name, 'JSON text', value);
        }
      }
      // A list (alert rules' events, a destination's recipients) is a JSON array.
      if (!isObject(parsed) && !Array.isArray(parsed)) throw wrong(resource, name, 'a JSON object', value);
      return parsed;
    }
  }
}

/** A record's fields, read and checked against its definition; fields the definition lacks are left out. */
export function decodeRecord<R extends ResourceDefinition>(resource: R, value: unknown, format: Format): RecordOf<R> {
  if (!isObject(value)) throw new CmiProtocolError(`a ${resource.root} is not an object: ${JSON.stringify(value)}`);
  const record: Record<string, unknown> = {};
  for (const [name, type, nullable] of resource.fields) {
    const raw = value[name];
    if (raw === undefined && resource.optional?.includes(name)) continue;
    if (raw === null || raw === undefined) {
      if (nullable !== 'nullable') throw wrong(resource, name, type === 'string' ? 'a string' : `a ${typeof type === 'object' ? 'list' : type}`, raw ?? 'missing');
      record[name] = null;
    } else {
      record[name] = decodeValue(resource, name, type, raw, format);
    }
  }
  return record as RecordOf<R>;
}

/** `{"user": {...}}` to `{...}` (JSON wraps every record in its root, docs/api.md#formats). */
export function unwrap(resource: ResourceDefinition, value: unknown): unknown {
  if (resource.unwrappedJson) return value;
  if (!isObject(value) || !isObject(value[resource.root])) throw new CmiProtocolError(`expected {"${resource.root}": {...}}, got ${JSON.stringify(value)}`);
  return value[resource.root];
}
