import type { ErrorMessages } from '../../shared/problems.js';
import type { ResourceDefinition, ResourceRecord } from './resource-definition.js';

/** What a handler answers with; one renderer turns it into JSON or XML bytes. */
export type Payload =
  | { kind: 'record'; resource: ResourceDefinition; record: ResourceRecord }
  | { kind: 'list'; resource: ResourceDefinition; records: readonly ResourceRecord[] }
  | { kind: 'errors'; messages: ErrorMessages }
  /** One named integer: `{"deleted": 3}`, `<deleted type="integer">3</deleted>`. */
  | { kind: 'count'; name: string; count: number };

export type Format = 'json' | 'xml';

export const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
};
