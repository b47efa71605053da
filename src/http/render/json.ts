import type { ErrorMessages } from '../../shared/problems.js';
import type { ResourceDefinition, ResourceRecord } from './resource-definition.js';
import { formatDatetime } from './datetime.js';
import type { Payload } from './payload.js';

function plainRecord(resource: ResourceDefinition, record: ResourceRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, type] of resource.fields) {
    const value = (record as Readonly<Record<string, unknown>>)[name];
    if (value === undefined && resource.optional?.includes(name)) continue;
    if (value === null || value === undefined) out[name] = null;
    else if (type === 'datetime') out[name] = formatDatetime(value as Date);
    else if (type === 'json') out[name] = JSON.parse(value as string) as unknown;
    else if (typeof type === 'object') out[name] = (value as ResourceRecord[]).map((item) => wrapped(type.arrayOf, item));
    else out[name] = value;
  }
  return out;
}

function wrapped(resource: ResourceDefinition, record: ResourceRecord): unknown {
  const plain = plainRecord(resource, record);
  return resource.unwrappedJson ? plain : { [resource.root]: plain };
}

export function renderJson(payload: Payload): string {
  switch (payload.kind) {
    case 'record':
      return JSON.stringify(wrapped(payload.resource, payload.record));
    case 'list':
      return JSON.stringify(payload.records.map((record) => wrapped(payload.resource, record)));
    case 'errors':
      return JSON.stringify({ errors: payload.messages satisfies ErrorMessages });
    case 'count':
      return JSON.stringify({ [payload.name]: payload.count });
  }
}
