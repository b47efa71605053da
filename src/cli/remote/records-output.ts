import type { ResourceDefinition, ResourceRecord } from '../../http/render/resource-definition.js';
import { renderJson } from '../../http/render/json.js';
import { renderXml } from '../../http/render/xml.js';
import { exact, type Output } from '../common/output.js';

/** --json, --xml, or neither (a table). */
export type RawFormat = 'json' | 'xml' | undefined;

/**
 * `--json` and `--xml`: the records as cmi's API renders them (the same renderer, so for cmi the bytes of
 * its answer; for an OnApp panel, the fields cmi's definitions know), written exactly. A list walked with --all is one list.
 */
export function rendered(format: 'json' | 'xml', payload: { resource: ResourceDefinition; record: ResourceRecord } | { resource: ResourceDefinition; records: readonly ResourceRecord[] }): Output {
  const body = 'record' in payload ? { kind: 'record' as const, ...payload } : { kind: 'list' as const, ...payload };
  const text = format === 'json' ? renderJson(body) : renderXml(body);
  return exact(text.replace(/\n$/, ''));
}
