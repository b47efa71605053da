import type { LightMyRequestResponse } from 'fastify';
import type { Selectable } from 'kysely';
import type { InfrastructureErrorsTable } from '../../src/db/schema.js';
import type { TestApp } from './app.js';

/** The error tracker's base path (docs/api.md#infrastructure-errors). */
export const ERRORS = '/sysadmin_tools/infrastructure/errors';

/** The message of a 403 for a missing permission, naming it; any one of several joined by "or" (docs/api.md#errors). */
export const forbiddenMessage = (...permissions: string[]) => `You are not authorized to perform this action (needs ${permissions.join(' or ')})`;
/** The 403 body, in JSON, of a caller without `permissions` (docs/api.md#errors). */
export const forbiddenJson = (...permissions: string[]) => JSON.stringify({ errors: { base: [forbiddenMessage(...permissions)] } });
/** The same in XML. */
export const forbiddenXml = (...permissions: string[]) => `<?xml version="1.0" encoding="UTF-8"?>\n<errors>\n  <error>${forbiddenMessage(...permissions)}</error>\n</errors>\n`;
export const NOT_FOUND_JSON = '{"errors":{"base":["Resource not found"]}}';

export const JSON_TYPE = 'application/json; charset=utf-8';
export const XML_TYPE = 'application/xml; charset=utf-8';
export const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n';

export type ErrorRow = Selectable<InfrastructureErrorsTable>;

/** The nine fields of a record as an answer carries them in JSON. */
export interface WireError {
  id: number;
  backtrace: string;
  counter: number;
  created_at: string;
  error_class: string;
  fingerprint: string;
  message: string;
  reported: boolean;
  updated_at: string;
}

/** POSTs a report, a JSON body of bare fields, to ERRORS.<format> (as the administrator unless told). */
export function report(
  t: TestApp,
  fields: Record<string, unknown>,
  { format = 'json', authorization = t.adminAuth }: { format?: 'json' | 'xml'; authorization?: string } = {},
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: `${ERRORS}.${format}`,
    payload: JSON.stringify(fields),
    headers: { authorization, 'content-type': 'application/json' },
  });
}

/** POSTs an XML body to ERRORS.xml as the administrator. */
export function reportXml(t: TestApp, xml: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: `${ERRORS}.xml`,
    payload: xml,
    headers: { authorization: t.adminAuth, 'content-type': 'application/xml', accept: 'application/xml' },
  });
}

/** A request with the administrator's credentials unless told otherwise (null: none at all). */
export function call(
  t: TestApp,
  method: 'GET' | 'DELETE',
  url: string,
  authorization: string | null = t.adminAuth,
): Promise<LightMyRequestResponse> {
  return t.app.inject({ method, url, headers: authorization === null ? {} : { authorization } });
}

/** The record of a JSON answer. */
export function recordOf(res: LightMyRequestResponse): WireError {
  return (JSON.parse(res.body) as { infrastructure_error: WireError }).infrastructure_error;
}

/** The ids of a JSON list answer, in order. */
export function idsOf(res: LightMyRequestResponse): number[] {
  return (JSON.parse(res.body) as Array<{ infrastructure_error: WireError }>).map((item) => item.infrastructure_error.id);
}

/** A stored time (an ISO string) in the form answers write it: UTC, `+00:00`, no fraction (docs/api.md#datetimes). */
export const wire = (stored: string): string => `${new Date(stored).toISOString().slice(0, 19)}+00:00`;

/** Text as XML element content: `& < >` escaped (docs/api.md#formats). */
export const xmlText = (text: string): string => text.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c] as string);

/** A stored row as the API writes it in JSON, wrapped in its root. */
export function errorJson(row: ErrorRow): string {
  return JSON.stringify({
    infrastructure_error: {
      id: Number(row.id),
      backtrace: row.backtrace,
      counter: Number(row.counter),
      created_at: wire(row.created_at),
      error_class: row.error_class,
      fingerprint: row.fingerprint,
      message: row.message,
      reported: Number(row.reported) === 1,
      updated_at: wire(row.updated_at),
    },
  });
}

/** A stored row as the API writes it in XML, at `indent`. */
export function errorXml(row: ErrorRow, indent = ''): string {
  const i = `${indent}  `;
  return (
    `${indent}<infrastructure_error>\n` +
    `${i}<id type="integer">${Number(row.id)}</id>\n` +
    `${i}<backtrace>${xmlText(row.backtrace)}</backtrace>\n` +
    `${i}<counter type="integer">${Number(row.counter)}</counter>\n` +
    `${i}<created_at type="datetime">${wire(row.created_at)}</created_at>\n` +
    `${i}<error_class>${xmlText(row.error_class)}</error_class>\n` +
    `${i}<fingerprint>${row.fingerprint}</fingerprint>\n` +
    `${i}<message>${xmlText(row.message)}</message>\n` +
    `${i}<reported type="boolean">${Number(row.reported) === 1}</reported>\n` +
    `${i}<updated_at type="datetime">${wire(row.updated_at)}</updated_at>\n` +
    `${indent}</infrastructure_error>\n`
  );
}

/** The stored record of an error. */
export async function errorRow(t: TestApp, id: number): Promise<ErrorRow | undefined> {
  return t.database.db.selectFrom('infrastructure_errors').selectAll().where('id', '=', id).executeTakeFirst();
}

/** How many rows each of the tracker's tables holds: for "nothing was recorded". */
export async function rowCounts(t: TestApp): Promise<Record<'errors' | 'occurrences' | 'histogram' | 'breakdown', number>> {
  const { db } = t.database;
  const count = async (table: 'infrastructure_errors' | 'error_occurrences' | 'error_histogram' | 'error_breakdown') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow()).n);
  return {
    errors: await count('infrastructure_errors'),
    occurrences: await count('error_occurrences'),
    histogram: await count('error_histogram'),
    breakdown: await count('error_breakdown'),
  };
}

/** The kept occurrences of an error as stored, oldest (lowest ordinal) first. */
export function occurrenceRows(t: TestApp, errorId: number) {
  return t.database.db.selectFrom('error_occurrences').selectAll().where('error_id', '=', errorId).orderBy('ordinal').execute();
}

/** The hourly counts of an error as stored: `hour` (Unix hours) to count. */
export async function histogramRows(t: TestApp, errorId: number): Promise<Array<[number, number]>> {
  const rows = await t.database.db.selectFrom('error_histogram').select(['hour', 'count']).where('error_id', '=', errorId).orderBy('hour').execute();
  return rows.map((row) => [Number(row.hour), Number(row.count)]);
}

/** The Unix hour (the histogram's key, migration 006) of a datetime. */
export const hourOf = (iso: string): number => Math.floor(new Date(iso).getTime() / 3_600_000);
