import type { Command } from 'commander';
import type { AlertDestination, AlertDestinationChanges, AlertRule, AlertRuleChanges, NewAlertDestination, NewAlertRule } from '../../client/index.js';
import { alertDestinationResource, alertRuleResource } from '../../alerts/alert-routing.resource.js';
import { deliveryResource } from '../../alerts/delivery.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { positive } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';
import { cliEnv } from '../common/io.js';

const datetime = (value: Date | null) => (value === null ? '-' : `${value.toISOString().slice(0, 19)}+00:00`);

const idOf = (raw: string, what: string) => positive(raw, what) as number;
const list = (raw: string) => raw.split(/[\s,]+/).filter((part) => part !== '');

/** `cmi alerts destinations|rules|test` against a server (docs/cli.md#cmi-alerts, docs/alert-routing.md). */
export function remoteAlertCommands({ client }: Connection) {
  const destinationTable = (items: AlertDestination[]): Line[] => table([
    ['ID', 'LABEL', 'KIND', 'ENABLED', 'WHERE'],
    ...items.map((d) => [String(d.id), cell(d.label, 40), d.kind, d.enabled ? 'yes' : 'no', cell(d.kind === 'email' ? `${d.to.join(', ')} via ${d.smtp_host ?? ''}:${d.smtp_port ?? ''}` : d.url ?? '-')]),
  ]);
  const ruleTable = (items: AlertRule[]): Line[] => table([
    ['ID', 'LABEL', 'EVENTS', 'MATCHES', 'DESTINATIONS', 'ENABLED'],
    ...items.map((r) => {
      const matches = [r.component && `component=${r.component}`, r.host && `host=${r.host}`, r.error_class && `class=${r.error_class}`, r.error_class_prefix && `class^=${r.error_class_prefix}`].filter(Boolean).join(' ') || 'every error';
      return [String(r.id), cell(r.label, 40), r.events.join(','), cell(matches), r.destination_ids.join(','), r.enabled ? 'yes' : 'no'];
    }),
  ]);

  return {
    async destinationsLs(raw: RawFormat): Promise<Output> {
      const items: AlertDestination[] = [];
      for await (const item of client.alertDestinations.all()) items.push(item);
      if (raw) return rendered(raw, { resource: alertDestinationResource, records: items.map((d) => ({ ...d, to: JSON.stringify(d.to) })) });
      return human(...destinationTable(items), `${items.length} alert destinations`);
    },
    async destinationsAdd(fields: NewAlertDestination): Promise<Output> {
      const destination = await client.alertDestinations.create(fields);
      return human(`Created alert destination ${destination.id} "${destination.label}" (${destination.kind}); try it: cmi alerts test ${destination.id}`);
    },
    async destinationsEdit(id: string, changes: AlertDestinationChanges): Promise<Output> {
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help alerts destinations edit)');
      await client.alertDestinations.update(idOf(id, 'the destination id'), changes);
      return human(`Updated alert destination ${id}`);
    },
    async destinationsRm(id: string): Promise<Output> {
      await client.alertDestinations.delete(idOf(id, 'the destination id'));
      return human(`Deleted alert destination ${id}`);
    },
    async rulesLs(raw: RawFormat): Promise<Output> {
      const items: AlertRule[] = [];
      for await (const item of client.alertRules.all()) items.push(item);
      if (raw) return rendered(raw, { resource: alertRuleResource, records: items.map((r) => ({ ...r, events: JSON.stringify(r.events), destination_ids: JSON.stringify(r.destination_ids) })) });
      return human(...ruleTable(items), `${items.length} alert rules`);
    },
    async rulesAdd(fields: NewAlertRule): Promise<Output> {
      const rule = await client.alertRules.create(fields);
      return human(`Created alert rule ${rule.id} "${rule.label}"`);
    },
    async rulesEdit(id: string, changes: AlertRuleChanges): Promise<Output> {
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help alerts rules edit)');
      await client.alertRules.update(idOf(id, 'the rule id'), changes);
      return human(`Updated alert rule ${id}`);
    },
    async rulesRm(id: string): Promise<Output> {
      await client.alertRules.delete(idOf(id, 'the rule id'));
      return human(`Deleted alert rule ${id}`);
    },
    async test(id: string, raw: RawFormat): Promise<Output> {
      const delivery = await client.alertDestinations.test(idOf(id, 'the destination id'));
      if (raw) return rendered(raw, { resource: deliveryResource, record: delivery });
      if (delivery.state === 'delivered') return human(`Test alert delivered to destination ${id} (status ${delivery.last_status ?? '-'}, delivery ${delivery.id})`);
      return human(`Test alert to destination ${id} not delivered yet: ${delivery.last_error ?? 'not tried yet'} (delivery ${delivery.id}, ${delivery.state}; retried as any alert, see cmi deliveries ls)`);
    },
    async deliveries(id: string): Promise<Output> {
      const items = await client.alertDestinations.deliveries(idOf(id, 'the destination id'));
      return human(...table([
        ['ID', 'KIND', 'ERROR', 'STATE', 'TRIES', 'STATUS', 'CREATED', 'REASON'],
        ...items.map((d) => [String(d.id), d.kind, String(d.error_id), d.state, String(d.attempts), d.last_status === null ? '-' : String(d.last_status), datetime(d.created_at), cell(d.last_error ?? '-', 60)]),
      ]), `${items.length} latest deliveries`);
    },
  };
}

type DestinationFlags = { label?: string; kind?: string; hookUrl?: string; smtpHost?: string; smtpPort?: string; smtpSecurity?: string; smtpUser?: string; from?: string; to?: string; enable?: boolean; disable?: boolean };
type RuleFlags = { label?: string; events?: string; component?: string; host?: string; errorClass?: string; errorClassPrefix?: string; spikeThreshold?: string; spikeWindow?: string; cooldown?: string; silentMinutes?: string; destinations?: string; enable?: boolean; disable?: boolean };

function enabledOf(options: { enable?: boolean; disable?: boolean }): { enabled?: boolean } {
  if (options.enable && options.disable) throw new RemoteUsageError('give --enable or --disable, not both');
  return options.enable ? { enabled: true } : options.disable ? { enabled: false } : {};
}

/**
 * A destination's fields from the options, and its secrets from the environment, never from an option
 * (which every local user sees in the process list; docs/cli.md#cmi-alerts): CMI_DESTINATION_SECRET,
 * CMI_DESTINATION_SMTP_PASSWORD, and CMI_DESTINATION_URL for a URL that is itself a secret (Slack's).
 */
function destinationFields(o: DestinationFlags, env: NodeJS.ProcessEnv = cliEnv()): AlertDestinationChanges {
  const given = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  if (o.hookUrl !== undefined && given('CMI_DESTINATION_URL') !== undefined) throw new RemoteUsageError('give the URL as --hook-url or in CMI_DESTINATION_URL, not both');
  const url = o.hookUrl ?? given('CMI_DESTINATION_URL');
  const secret = given('CMI_DESTINATION_SECRET');
  const smtpPassword = given('CMI_DESTINATION_SMTP_PASSWORD');
  return {
    ...(o.label !== undefined ? { label: o.label } : {}),
    ...(o.kind !== undefined ? { kind: o.kind as NewAlertDestination['kind'] } : {}),
    ...(url !== undefined ? { url } : {}),
    ...(secret !== undefined ? { secret } : {}),
    ...(o.smtpHost !== undefined ? { smtp_host: o.smtpHost } : {}),
    ...(o.smtpPort !== undefined ? { smtp_port: positive(o.smtpPort, '--smtp-port') } : {}),
    ...(o.smtpSecurity !== undefined ? { smtp_security: o.smtpSecurity as NewAlertDestination['smtp_security'] } : {}),
    ...(o.smtpUser !== undefined ? { smtp_user: o.smtpUser } : {}),
    ...(smtpPassword !== undefined ? { smtp_password: smtpPassword } : {}),
    ...(o.from !== undefined ? { from: o.from } : {}),
    ...(o.to !== undefined ? { to: list(o.to) } : {}),
    ...enabledOf(o),
  };
}

function ruleFields(o: RuleFlags): AlertRuleChanges {
  return {
    ...(o.label !== undefined ? { label: o.label } : {}),
    ...(o.events !== undefined ? { events: list(o.events) as NewAlertRule['events'] } : {}),
    ...(o.component !== undefined ? { component: o.component } : {}),
    ...(o.host !== undefined ? { host: o.host } : {}),
    ...(o.errorClass !== undefined ? { error_class: o.errorClass } : {}),
    ...(o.errorClassPrefix !== undefined ? { error_class_prefix: o.errorClassPrefix } : {}),
    ...(o.spikeThreshold !== undefined ? { spike_threshold: positive(o.spikeThreshold, '--spike-threshold') } : {}),
    ...(o.spikeWindow !== undefined ? { spike_window: positive(o.spikeWindow, '--spike-window') } : {}),
    ...(o.cooldown !== undefined ? { cooldown: /^\d{1,10}$/.test(o.cooldown) ? Number(o.cooldown) : (() => { throw new RemoteUsageError(`--cooldown must be a whole number of seconds (got "${o.cooldown}")`); })() } : {}),
    ...(o.silentMinutes !== undefined ? { silent_minutes: positive(o.silentMinutes, '--silent-minutes') } : {}),
    ...(o.destinations !== undefined ? { destination_ids: list(o.destinations).map((d) => idOf(d, '--destinations')) } : {}),
    ...enabledOf(o),
  };
}

const destinationOptions = (command: Command) => command
  .option('--hook-url <url>', 'webhook, slack: where it posts (--url names the cmi server); a secret URL (Slack\'s) in env CMI_DESTINATION_URL instead')
  .option('--smtp-host <host>', 'email: the SMTP server')
  .option('--smtp-port <port>', 'email: its port (default 587, 465 with tls, 25 with none)')
  .option('--smtp-security <mode>', 'email: none, starttls (default) or tls')
  .option('--smtp-user <user>', 'email: the SMTP login')
  .option('--from <address>', 'email: the sender')
  .option('--to <addresses>', 'email: the recipients, separated by commas')
  .option('--enable', 'enabled')
  .option('--disable', 'disabled: nothing is sent to it');

const ruleOptions = (command: Command) => command
  .option('--component <name>', 'only errors reported by this component')
  .option('--host <name>', 'only errors reported from this host')
  .option('--error-class <class>', 'only errors of this class')
  .option('--error-class-prefix <prefix>', 'only errors whose class starts with this')
  .option('--spike-threshold <n>', 'a spike: more than n occurrences in the window')
  .option('--spike-window <seconds>', 'the spike window')
  .option('--cooldown <seconds>', 'no second spike alert within this long')
  .option('--silent-minutes <minutes>', 'a log source in scope silent this long raises silent, then back (events silent, back)')
  .option('--enable', 'enabled')
  .option('--disable', 'disabled');

/** `cmi alerts destinations|rules ...` and `cmi alerts test ID`: alert routing on a server (docs/alert-routing.md). */
export function addRemoteAlertCommands(program: Command): void {
  const alerts = program.command('alerts').description('alert routing on a server: destinations, rules, tests (docs/alert-routing.md)');
  const destinations = alerts.command('destinations').description('where alerts go: webhook, slack, email');
  rawOptions(remote(destinations.command('ls'), 'list the alert destinations (never their secrets)', 'cmi alerts destinations ls'))
    .action(async (options: { json?: boolean; xml?: boolean }, command: Command) => run(command, options.xml, (c) => remoteAlertCommands(c).destinationsLs(rawFormat(options))));
  destinationOptions(remote(destinations.command('add <label> <kind>'), 'add a destination (kind: webhook, slack or email); its secrets from the environment, never options (the process list shows those): CMI_DESTINATION_SECRET (webhook: the signing key, 16 characters or more), CMI_DESTINATION_SMTP_PASSWORD (email), CMI_DESTINATION_URL (a URL that is a secret, as Slack\'s)',
    'CMI_DESTINATION_URL=https://hooks.slack.com/services/T/B/X cmi alerts destinations add "Storage Slack" slack',
    'CMI_DESTINATION_SMTP_PASSWORD=... cmi alerts destinations add "Billing mail" email --smtp-host smtp.example.com --smtp-user cmi --from cmi@example.com --to billing@example.com'))
    .action(async (label: string, kind: string, options: DestinationFlags, command: Command) =>
      run(command, false, (c) => remoteAlertCommands(c).destinationsAdd({ ...destinationFields(options), label, kind } as NewAlertDestination)));
  destinationOptions(remote(destinations.command('edit <id>'), 'change a destination; new secrets from the environment, as add takes them', 'cmi alerts destinations edit 2 --to billing@example.com,oncall@example.com'))
    .option('--label <label>', 'new label')
    .action(async (id: string, options: DestinationFlags, command: Command) => run(command, false, (c) => remoteAlertCommands(c).destinationsEdit(id, destinationFields(options))));
  remote(destinations.command('rm <id>'), 'delete a destination; what is pending to it fails', 'cmi alerts destinations rm 2')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteAlertCommands(c).destinationsRm(id)));
  remote(destinations.command('deliveries <id>'), 'a destination\'s latest deliveries, with the reason of each failure', 'cmi alerts destinations deliveries 2')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteAlertCommands(c).deliveries(id)));

  const rules = alerts.command('rules').description('which events of which errors go where');
  rawOptions(remote(rules.command('ls'), 'list the alert rules', 'cmi alerts rules ls'))
    .action(async (options: { json?: boolean; xml?: boolean }, command: Command) => run(command, options.xml, (c) => remoteAlertCommands(c).rulesLs(rawFormat(options))));
  ruleOptions(remote(rules.command('add <label>'), 'add a rule', 'cmi alerts rules add Storage --events new,spike --component storage --destinations 1'))
    .requiredOption('--events <events>', 'new, regression, spike, report (separated by commas)')
    .requiredOption('--destinations <ids>', 'destination ids, separated by commas')
    .action(async (label: string, options: RuleFlags, command: Command) =>
      run(command, false, (c) => remoteAlertCommands(c).rulesAdd({ ...ruleFields(options), label } as NewAlertRule)));
  ruleOptions(remote(rules.command('edit <id>'), 'change a rule', 'cmi alerts rules edit 1 --events new,regression'))
    .option('--label <label>', 'new label')
    .option('--events <events>', 'new, regression, spike, report (separated by commas)')
    .option('--destinations <ids>', 'destination ids, separated by commas')
    .action(async (id: string, options: RuleFlags, command: Command) => run(command, false, (c) => remoteAlertCommands(c).rulesEdit(id, ruleFields(options))));
  remote(rules.command('rm <id>'), 'delete a rule', 'cmi alerts rules rm 1')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteAlertCommands(c).rulesRm(id)));

  rawOptions(remote(alerts.command('test <destination-id>'), 'send a sample alert to a destination through the outbox and print the outcome', 'cmi alerts test 2'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) => run(command, options.xml, (c) => remoteAlertCommands(c).test(id, rawFormat(options))));
}
