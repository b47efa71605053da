import type { ResourceDefinition, ResourceRecord } from '../../http/render/resource-definition.js';
import type { Page, PageParams } from '../../client/index.js';
import { RemoteUsageError } from './connection.js';
import { type RawFormat, rendered } from './records-output.js';
import { human, type Line, type Output, progressBar, styled } from '../common/output.js';

/** An option's number (`--page`, `--per-page`, an id): a positive integer, else a usage error (exit 2); the server bounds it further. */
export function positive(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
  return Number(raw);
}

/** A record named by its id on the command line (`the key`, `the entry`): a positive integer, else a usage error. */
export function idArgument(raw: string, what: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw new RemoteUsageError(`${what} is named by its id, a positive integer (got "${raw}")`);
  return Number(raw);
}

/** What `ls` takes: --page, --per-page, --all. */
export interface ListOptions {
  page?: string;
  perPage?: string;
  all?: boolean;
}

/** A list of the client's (`client.roles`, `client.buckets`, ...). */
export interface Listable<T> {
  list(params: PageParams): Promise<Page<T>>;
  all(params: Omit<PageParams, 'page'>): AsyncGenerator<T, void, undefined>;
}

/** Every item of a list, with a progress bar on a terminal. */
export async function everyItem<T>(api: Listable<T>, label: string, perPage: number | undefined): Promise<T[]> {
  const bar = progressBar(label);
  const items: T[] = [];
  try {
    const first = await api.list({ perPage, page: 1 });
    bar.update(0, first.total);
    for await (const item of api.all({ perPage: first.limit })) {
      items.push(item);
      bar.update(items.length, Math.max(first.total, items.length));
    }
  } finally {
    bar.done();
  }
  return items;
}

/**
 * `ls` as `cmi users ls` has it (docs/cli.md#output): a page (or --all) as a table and a count, or the
 * records as the API renders them (--json, --xml).
 */
export async function listOutput<T extends ResourceRecord>(
  api: Listable<T>,
  options: ListOptions,
  raw: RawFormat,
  what: { resource: ResourceDefinition; noun: string; table: (items: T[]) => Line[] },
): Promise<Output> {
  const page = positive(options.page, '--page');
  const perPage = positive(options.perPage, '--per-page');
  if (options.all && page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
  if (options.all) {
    const items = await everyItem(api, what.noun, perPage);
    if (raw) return rendered(raw, { resource: what.resource, records: items });
    return human(...what.table(items), `${items.length} ${what.noun}`);
  }
  const result = await api.list({ page, perPage });
  if (raw) return rendered(raw, { resource: what.resource, records: result.items });
  const pages = Math.max(1, Math.ceil(result.total / result.limit));
  return human(...what.table(result.items), `${result.items.length} of ${result.total} ${what.noun} (page ${result.page} of ${pages})`);
}

/** A datetime as the API writes it. */
export const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

/** `name: value` lines, the values aligned, the names bold on a terminal (as `cmi users show`). */
export function fieldLines(fields: ReadonlyArray<readonly [string, string]>): Line[] {
  const width = Math.max(...fields.map(([name]) => name.length));
  return fields.map(([name, text]): Line => [styled('bold', `${name}:`.padEnd(width + 1)), ` ${text}`]);
}

/**
 * The one record among `items` that `target` names: by `exact` (a unique key, as a role's identifier), else
 * by label in any case; none, or several by label, is a usage error (exit 2) that says what to give.
 */
export async function pick<T extends { id: number; label: string }>(
  items: AsyncIterable<T> | Iterable<T>,
  target: string,
  noun: string,
  exact?: (item: T) => string,
): Promise<T> {
  const byLabel: T[] = [];
  const wanted = target.toLowerCase();
  for await (const item of items) {
    if (exact !== undefined && exact(item) === target) return item;
    if (item.label.toLowerCase() === wanted) byLabel.push(item);
  }
  if (byLabel.length === 1) return byLabel[0]!;
  const by = exact === undefined ? 'an id or a label' : 'an id, an identifier or a label';
  if (byLabel.length === 0) throw new RemoteUsageError(`no ${noun} "${target}" (give ${by})`);
  throw new RemoteUsageError(`${byLabel.length} ${noun}s are labelled "${target}" (ids ${byLabel.map((item) => item.id).join(', ')}): give the id${exact === undefined ? '' : ' or the identifier'}`);
}
