import type { Command } from 'commander';
import type { Delivery } from '../../client/index.js';
import { deliveryResource as resource } from '../../alerts/delivery.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, progressBar, table } from '../common/output.js';

const STATE_STYLE = { delivered: 'green', pending: 'yellow', failed: 'red' } as const;

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;

export interface DeliveryListParams {
  state?: string;
  page?: number;
  perPage?: number;
}

/** `cmi deliveries ls` against a server (administrators only): the webhook outbox, the oldest first. */
export function remoteDeliveryCommands({ client }: Connection) {
  const deliveryTable = (deliveries: Delivery[]): Line[] =>
    table([
      ['ID', 'KIND', 'ERROR', 'STATE', 'TRIES', 'STATUS', 'CREATED', 'DELIVERED', 'URL'],
      ...deliveries.map((d) => [
        String(d.id), cell(d.kind), String(d.error_id), cell(d.state), String(d.attempts), d.last_status === null ? '-' : String(d.last_status),
        datetime(d.created_at), d.delivered_at === null ? '-' : datetime(d.delivered_at), cell(d.url),
      ]),
    ], (row, column) => (column === 3 ? STATE_STYLE[deliveries[row]!.state as keyof typeof STATE_STYLE] : undefined));

  return {
    async ls({ state, ...page }: DeliveryListParams, all: boolean, raw: RawFormat): Promise<Output> {
      // The server refuses another state in its own words (422); the client's type names the three.
      const filter = { state: state as keyof typeof STATE_STYLE | undefined };
      if (all) {
        if (page.page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
        const bar = progressBar('deliveries');
        const deliveries: Delivery[] = [];
        try {
          const first = await client.deliveries.list({ ...filter, perPage: page.perPage, page: 1 });
          for await (const delivery of client.deliveries.all({ ...filter, perPage: first.limit })) {
            deliveries.push(delivery);
            bar.update(deliveries.length, Math.max(first.total, deliveries.length));
          }
        } finally {
          bar.done();
        }
        if (raw) return rendered(raw, { resource, records: deliveries });
        return human(...deliveryTable(deliveries), `${deliveries.length} deliveries`);
      }
      const result = await client.deliveries.list({ ...filter, ...page });
      if (raw) return rendered(raw, { resource, records: result.items });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...deliveryTable(result.items), `${result.items.length} of ${result.total} deliveries (page ${result.page} of ${pages})`);
    },
  };
}

/** `cmi deliveries ls`: the server's webhook deliveries (there is no endpoint to retry one: `cmi local deliveries retry`). */
export function addRemoteDeliveryCommands(program: Command): void {
  const deliveries = program.command('deliveries').description('webhook deliveries on a server (cmi local deliveries: in the configured database)');
  rawOptions(remote(deliveries.command('ls'), 'list the webhook deliveries (reports and alerts) on the server, the oldest first', 'cmi deliveries ls --state failed', 'cmi deliveries ls --all --json'))
    .option('--state <state>', 'only pending, failed or delivered ones')
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'deliveries a page')
    .option('--all', 'every page (a progress bar on a terminal)')
    .action(async (options: { state?: string; page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean }, command: Command) => {
      const params = { state: options.state, page: positive(options.page, '--page'), perPage: positive(options.perPage, '--per-page') };
      await run(command, options.xml, (c) => remoteDeliveryCommands(c).ls(params, options.all === true, rawFormat(options)));
    });
}
