import type { Command } from 'commander';
import { type Config, loadConfig } from '../../config.js';
import { OPERATOR } from '../../roles/authorization.js';
import { auditTrailOn } from '../../audit/audit-trail.js';
import { systemClock } from '../../shared/clock.js';
import { NotFound } from '../../shared/problems.js';
import { webhookDeliveries } from '../../alerts/deliveries.service.js';
import { formatDatetime } from '../../http/render/datetime.js';
import { renderJson } from '../../http/render/json.js';
import { deliveryResource as resource } from '../../alerts/delivery.resource.js';
import type { Database } from '../../db/database.js';
import { webhookDeliveriesRepository } from '../../alerts/deliveries.store.js';
import { Refusal } from '../common/usage-error.js';
import { exact, human, type Output, table, write } from '../common/output.js';
import { pages, withDatabase } from './database.js';
import { cliEnv } from '../common/io.js';

/**
 * `cmi local deliveries ...`: the webhook outbox on the configured database, as the operator, through the
 * same service as GET /sysadmin_tools/infrastructure/deliveries (docs/operations.md#cmi-local-deliveries).
 * This command sends nothing itself: a running `cmi serve` does.
 */
export function deliveryCommands(database: Database, config: Config) {
  const deliveries = webhookDeliveries(webhookDeliveriesRepository(database), systemClock, auditTrailOn(database, systemClock, config.auditRetentionDays), () => undefined);
  return {
    async list(state: string | undefined, page: number, perPage: number, json: boolean): Promise<Output> {
      const { items, total } = await deliveries.list(OPERATOR, state === undefined ? {} : { state }, perPage, (page - 1) * perPage);
      if (json) return exact(renderJson({ kind: 'list', resource, records: items }));
      const rows = items.map((d) => [
        String(d.id), d.kind, String(d.error_id), d.state, String(d.attempts), d.last_status === null ? '-' : String(d.last_status),
        formatDatetime(d.created_at), d.delivered_at === null ? '-' : formatDatetime(d.delivered_at), d.url,
      ]);
      return human(...table([['ID', 'KIND', 'ERROR', 'STATE', 'TRIES', 'STATUS', 'CREATED', 'DELIVERED', 'URL'], ...rows]), `${items.length} of ${total} deliveries (page ${page})`);
    },

    async retry(raw: string): Promise<Output> {
      if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new Refusal(`no delivery ${raw}`);
      try {
        const delivery = await deliveries.retry(OPERATOR, Number(raw));
        return human(`Delivery ${delivery.id} (${delivery.kind} of error ${delivery.error_id}) is pending again; a running cmi serve sends it within ${config.webhooks.pollIntervalMs} ms`);
      } catch (error) {
        if (error instanceof NotFound) throw new Refusal(`no delivery ${raw}`);
        throw error;
      }
    },
  };
}

/** `cmi local deliveries ...`: the webhook deliveries in the configured database. */
export function addLocalDeliveryCommands(local: Command): void {
  const deliveries = local.command('deliveries').description('the webhook deliveries (reports and alerts) in the configured database');
  const onDeliveries = (run: (commands: ReturnType<typeof deliveryCommands>) => Promise<Output>) => async () =>
    write(await withDatabase((database) => run(deliveryCommands(database, loadConfig(cliEnv())))));

  deliveries
    .command('ls')
    .description('list deliveries, the oldest first')
    .option('--state <state>', 'only pending, failed or delivered ones')
    .option('--json', 'print the JSON array the API answers')
    .option('--page <n>', 'page', '1')
    .option('--per-page <n>', 'deliveries a page', '100')
    .action(async (options: { state?: string; json?: boolean; page: string; perPage: string }) => {
      const { page, perPage } = pages(options);
      await onDeliveries((c) => c.list(options.state, page, perPage, options.json === true))();
    });
  deliveries
    .command('retry <id>')
    .description('send a delivery again (same id and body), now, from a running cmi serve')
    .action(async (id: string) => onDeliveries((c) => c.retry(id))());
}
