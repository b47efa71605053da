import type { ErrorMessages } from '../../shared/problems.js';
import type { ResourceDefinition, ResourceRecord } from './resource-definition.js';
import { formatDatetime } from './datetime.js';
import type { Payload } from './payload.js';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

// Everything XML 1.0 does not allow in a document (control characters, lone surrogates, U+FFFE/FFFF).
const FORBIDDEN = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const TEXT_ESCAPES = /[&<>]/g;
const ESCAPED: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

export function escapeText(text: string): string {
  return text.replace(FORBIDDEN, '').replace(TEXT_ESCAPES, (c) => ESCAPED[c] as string);
}

function writeRecord(resource: ResourceDefinition, record: ResourceRecord, indent: string, out: string[]): void {
  const inner = `${indent}  `;
  out.push(`${indent}<${resource.root}>\n`);
  for (const [name, type] of resource.fields) {
    const value = (record as Readonly<Record<string, unknown>>)[name];
    if (value === undefined && resource.optional?.includes(name)) continue;
    if (value === null || value === undefined) {
      out.push(`${inner}<${name} nil="true"/>\n`);
    } else if (typeof type === 'object') {
      writeList(type.arrayOf, value as ResourceRecord[], inner, out, name);
    } else if (type === 'string' || type === 'json') {
      out.push(`${inner}<${name}>${escapeText(`${value as string}`)}</${name}>\n`);
    } else {
      const text = type === 'datetime' ? formatDatetime(value as Date) : `${value as number | boolean}`;
      out.push(`${inner}<${name} type="${type}">${text}</${name}>\n`);
    }
  }
  out.push(`${indent}</${resource.root}>\n`);
}

function writeList(
  resource: ResourceDefinition,
  records: readonly ResourceRecord[],
  indent: string,
  out: string[],
  name = resource.plural,
): void {
  if (records.length === 0) {
    out.push(`${indent}<${name} type="array"/>\n`);
    return;
  }
  out.push(`${indent}<${name} type="array">\n`);
  for (const record of records) writeRecord(resource, record, `${indent}  `, out);
  out.push(`${indent}</${name}>\n`);
}

/** Rails `errors.to_xml`: full messages, the field humanized in front ("Login has already been taken"). */
function fullMessages(messages: ErrorMessages): string[] {
  return Object.entries(messages).flatMap(([field, list]) => {
    if (field === 'base') return list;
    const humanized = field.replace(/_/g, ' ');
    return list.map((message) => `${humanized.charAt(0).toUpperCase()}${humanized.slice(1)} ${message}`);
  });
}

export function renderXml(payload: Payload): string {
  const out = [DECLARATION];
  switch (payload.kind) {
    case 'record':
      writeRecord(payload.resource, payload.record, '', out);
      break;
    case 'list':
      writeList(payload.resource, payload.records, '', out);
      break;
    case 'errors':
      out.push('<errors>\n');
      for (const message of fullMessages(payload.messages)) out.push(`  <error>${escapeText(message)}</error>\n`);
      out.push('</errors>\n');
      break;
    case 'count':
      out.push(`<${payload.name} type="integer">${payload.count}</${payload.name}>\n`);
      break;
  }
  return out.join('');
}
