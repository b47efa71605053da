import { routeReport } from '../../alerts/planner.js';
import { alertRoutingRepository } from '../../alerts/alert-routing.store.js';
import { type Command, Option } from 'commander';
import { type Config, loadConfig } from '../../config.js';
import { OPERATOR } from '../../roles/authorization.js';
import { auditTrailOn } from '../../audit/audit-trail.js';
import { systemClock } from '../../shared/clock.js';
import { NotFound } from '../../shared/problems.js';
import { errorReporting } from '../../alerts/reporting.js';
import { HISTOGRAM_KEPT_DAYS, trackerService } from '../../tracker/tracker.service.js';
import { displayUrl } from '../../alerts/sender.js';
import type { InfrastructureError } from '../../tracker/infrastructure-error.js';
import { formatDatetime } from '../../http/render/datetime.js';
import { renderJson } from '../../http/render/json.js';
import { webhookRendering } from '../../alerts/webhook-json.js';
import { infrastructureErrorResource as resource } from '../../tracker/infrastructure-error.resource.js';
import type { Database } from '../../db/database.js';
import { trackerRepository } from '../../tracker/tracker.store.js';
import { webhookDeliveriesRepository } from '../../alerts/deliveries.store.js';
import { Refusal } from '../common/usage-error.js';
import { cell, complain, exact, human, type Output, table, write } from '../common/output.js';
import { pages, withDatabase } from './database.js';
import { cliEnv } from '../common/io.js';

/** The filters of `cmi local errors ls`, as its options give them. */
export interface ErrorListOptions {
  reported?: boolean;
  errorClass?: string;
  since?: string;
}

/** A list's MESSAGE column is at most this many characters. */
const MESSAGE_COLUMN_CHARS = 60;
/** `show` prints this many of the latest occurrences, and this many hosts. */
const SHOWN_OCCURRENCES = 5;
const SHOWN_HOSTS = 10;

/** An id as `cmi local errors show|rm` take it; anything else names no error. */
function parseErrorId(raw: string): number {
  if (!/^[1-9]\d{0,9}$/.test(raw) || Number(raw) > 2_147_483_647) throw new Refusal(`no infrastructure error ${raw}`);
  return Number(raw);
}

/**
 * `cmi local errors ...`: the error tracker on the configured database, as the operator (who may do anything an
 * administrator may), through the same service and query rules as the HTTP API (docs/operations.md#cmi-local-errors).
 */
export function errorCommands(database: Database, config: Config) {
  const errors = trackerRepository(database);
  const audit = auditTrailOn(database, systemClock, config.auditRetentionDays);
  const tracker = trackerService(errors, systemClock, audit, config.errors);
  // A failed try is told on stderr in one line; the final refusal is the command's error (docs/operations.md#report).
  const reporting = errorReporting(tracker, errors, webhookDeliveriesRepository(database), systemClock, config.webhooks, webhookRendering, {
    warn: (fields) => {
      const { attempts, status, problem } = fields as { attempts: number; status: number | null; problem?: string };
      complain(`cmi: try ${attempts} of the report failed (${status === null ? (problem ?? 'no answer') : `HTTP ${status}`})`);
    },
    info: () => undefined,
  }, audit, {
    // Routed reports are queued; the serving processes' outboxes send them (docs/alert-routing.md#rules).
    route: (record) => routeReport(alertRoutingRepository(database), record, { publicUrl: config.webhooks.publicUrl, rendering: webhookRendering, clock: systemClock }),
    queued: () => undefined,
  });

  /** The error, or the one-line refusal `cmi: no infrastructure error N`. */
  const find = async (raw: string): Promise<InfrastructureError> => {
    const id = parseErrorId(raw);
    try {
      return await tracker.find(OPERATOR, id);
    } catch (error) {
      if (error instanceof NotFound) throw new Refusal(`no infrastructure error ${id}`);
      throw error;
    }
  };

  return {
    /** A page of errors, newest first; `json`: the array GET /sysadmin_tools/infrastructure/errors.json answers. */
    async list(options: ErrorListOptions, page: number, perPage: number, json: boolean): Promise<Output> {
      // The HTTP query's names, so a bad value is refused in the same words (docs/operations.md#ls).
      const query: Record<string, string> = {};
      if (options.reported !== undefined) query.reported = String(options.reported);
      if (options.errorClass !== undefined) query.error_class = options.errorClass;
      if (options.since !== undefined) query.since = options.since;
      const { items, total } = await tracker.list(OPERATOR, query, perPage, (page - 1) * perPage);
      if (json) return exact(renderJson({ kind: 'list', resource, records: items }));
      const rows = items.map((e) => [
        String(e.id),
        String(e.counter),
        formatDatetime(e.updated_at),
        e.reported ? 'yes' : 'no',
        cell(e.error_class),
        cell(e.message, MESSAGE_COLUMN_CHARS),
      ]);
      return human(...table([['ID', 'COUNT', 'LAST SEEN', 'REPORTED', 'CLASS', 'MESSAGE'], ...rows]), `${items.length} of ${total} errors (page ${page})`);
    },

    /** The record's nine fields, its latest occurrences and the hosts it occurred on; `json`: the record as the API answers it. */
    async show(raw: string, json: boolean): Promise<Output> {
      const record = await find(raw);
      if (json) return exact(renderJson({ kind: 'record', resource, record }));
      const [occurrences, hosts] = await Promise.all([
        tracker.occurrences(OPERATOR, record.id, SHOWN_OCCURRENCES, 0),
        tracker.breakdown(OPERATOR, record.id, { by: 'host' }, SHOWN_HOSTS, 0),
      ]);
      const indented = (text: string) => text.split(/\r\n|\r|\n/).map((line) => `    ${line}`);
      const [firstLine, ...moreLines] = record.message.split(/\r\n|\r|\n/);
      return human(
        `id: ${record.id}`,
        record.backtrace === '' ? 'backtrace: (none)' : 'backtrace:',
        ...(record.backtrace === '' ? [] : indented(record.backtrace)),
        `counter: ${record.counter}`,
        `created_at: ${formatDatetime(record.created_at)}`,
        `error_class: ${record.error_class}`,
        `fingerprint: ${record.fingerprint}`,
        `message: ${firstLine}`,
        ...moreLines.map((line) => `    ${line}`),
        `reported: ${record.reported}`,
        `updated_at: ${formatDatetime(record.updated_at)}`,
        '',
        `Latest occurrences (${occurrences.items.length} of ${occurrences.total} kept):`,
        ...table([
          ['OCCURRED AT', 'HOST', 'COMPONENT', 'REQUEST ID'],
          ...occurrences.items.map((o) => [formatDatetime(o.occurred_at), cell(o.host ?? '-'), cell(o.component ?? '-'), cell(o.request_id ?? '-')]),
        ], undefined, '  '),
        '',
        `By host (${hosts.items.length} of ${hosts.total}):`,
        ...table([['HOST', 'COUNT'], ...hosts.items.map((h) => [cell(h.value ?? '-'), String(h.count)])], undefined, '  '),
      );
    },

    /** POST .../errors/:id/report from the command line: delivered first when CMI_REPORT_WEBHOOK_URL is set. */
    async report(raw: string): Promise<Output> {
      const record = await find(raw);
      if (record.reported) return human(`Infrastructure error ${record.id} was already reported; nothing sent`);
      await reporting.report(OPERATOR, record.id);
      const url = config.webhooks.reportUrl;
      return human(`Reported infrastructure error ${record.id} (${record.error_class}: ${cell(record.message)})${url === undefined ? '' : ` to ${displayUrl(url)}`}`);
    },

    async remove(raw: string): Promise<Output> {
      const record = await find(raw);
      try {
        await tracker.remove(OPERATOR, record.id);
      } catch (error) {
        // Deleted by someone else since it was read.
        if (error instanceof NotFound) throw new Refusal(`no infrastructure error ${record.id}`);
        throw error;
      }
      return human(`Deleted infrastructure error ${record.id} (${record.error_class}: ${cell(record.message)})`);
    },

    /** Retention now, in this process, whatever the periodic job's lease says (docs/operations.md#prune). */
    async prune(): Promise<Output> {
      const { errors, buckets } = await tracker.prune(OPERATOR);
      const days = config.errors.retentionDays;
      return human(`Removed ${errors} ${errors === 1 ? 'error' : 'errors'} not seen for ${days} ${days === 1 ? 'day' : 'days'} ` +
        `and ${buckets} hourly ${buckets === 1 ? 'count' : 'counts'} older than ${HISTOGRAM_KEPT_DAYS} days`);
    },
  };
}

/** `cmi local errors ...`: the error tracker in the configured database. */
export function addLocalErrorCommands(local: Command): void {
  const errors = local.command('errors').description('investigate and remove infrastructure errors in the configured database');
  const onErrors = (run: (commands: ReturnType<typeof errorCommands>) => Promise<Output>) => async () =>
    write(await withDatabase((database) => run(errorCommands(database, loadConfig(cliEnv())))));

  errors
    .command('ls')
    .description('list errors, the latest seen first')
    .addOption(new Option('--reported', 'only errors marked reported').conflicts('unreported'))
    .option('--unreported', 'only errors not marked reported')
    .option('--class <class>', 'only errors of this exact class')
    .option('--since <datetime>', 'only errors seen at or after this time, e.g. 2026-11-20T10:00:00+00:00')
    .option('--json', 'print the JSON array the API answers')
    .option('--page <n>', 'page', '1')
    .option('--per-page <n>', 'errors a page', '100')
    .action(async (options: { reported?: boolean; unreported?: boolean; class?: string; since?: string; json?: boolean; page: string; perPage: string }) => {
      const { page, perPage } = pages(options);
      const filters: ErrorListOptions = {
        reported: options.reported ? true : options.unreported ? false : undefined,
        errorClass: options.class,
        since: options.since,
      };
      await onErrors((c) => c.list(filters, page, perPage, options.json === true))();
    });
  errors
    .command('show <id>')
    .description('print an error, its latest occurrences and the hosts it occurred on')
    .option('--json', 'print the record as the API answers it')
    .action(async (id: string, options: { json?: boolean }) => onErrors((c) => c.show(id, options.json === true))());
  errors
    .command('report <id>')
    .description('mark an error reported, delivering it first to CMI_REPORT_WEBHOOK_URL when that is set')
    .action(async (id: string) => onErrors((c) => c.report(id))());
  errors.command('rm <id>').description('delete an error and everything kept about it').action(async (id: string) => onErrors((c) => c.remove(id))());
  errors
    .command('prune')
    .description('remove errors not seen for CMI_ERRORS_RETENTION_DAYS days and old hourly counts, now')
    .action(async () => onErrors((c) => c.prune())());
}
