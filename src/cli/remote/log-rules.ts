import type { Command } from 'commander';
import type { CmiClient, LogRule, LogRuleChanges } from '../../client/index.js';
import { logRuleResource } from '../../logs/log-rule.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { datetime, fieldLines, listOutput, type ListOptions, pick } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';

const describe = (rule: LogRule) => `${rule.id} "${rule.label}"`;

/** The rule a command names: an id, else a label (docs/cli.md#cmi-log-rules). */
async function findRule(client: CmiClient, target: string): Promise<LogRule> {
  if (/^\d+$/.test(target)) return client.logRules.get(Number(target));
  return pick(client.logRules.all({ perPage: 200 }), target, 'log rule');
}

export interface LogRuleFlags {
  label?: string;
  pattern?: string;
  errorClass?: string;
  program?: string;
  component?: string;
  position?: string;
  enabled?: boolean;
}

/** The fields the flags set: `--program ''` and `--component ''` clear them; a position that is no number goes as given, for the server to refuse. */
function ruleFields(flags: LogRuleFlags): LogRuleChanges {
  const fields: LogRuleChanges = {};
  if (flags.label !== undefined) fields.label = flags.label;
  if (flags.pattern !== undefined) fields.pattern = flags.pattern;
  if (flags.errorClass !== undefined) fields.error_class = flags.errorClass;
  if (flags.program !== undefined) fields.program = flags.program === '' ? null : flags.program;
  if (flags.component !== undefined) fields.component = flags.component === '' ? null : flags.component;
  if (flags.position !== undefined) fields.position = (/^\d+$/.test(flags.position) ? Number(flags.position) : flags.position) as number;
  if (flags.enabled !== undefined) fields.enabled = flags.enabled;
  return fields;
}

/** `cmi log-rules ls|show|add|edit|rm` against a server. */
export function remoteLogRuleCommands({ client }: Connection) {
  const ruleTable = (rules: LogRule[]): Line[] =>
    table([['ID', 'POSITION', 'LABEL', 'PROGRAM', 'PATTERN', 'ERROR CLASS', 'COMPONENT', 'ENABLED'], ...rules.map((r) => [
      String(r.id), String(r.position), cell(r.label), cell(r.program ?? '*'), cell(r.pattern), cell(r.error_class), cell(r.component ?? '-'), r.enabled ? 'yes' : 'no',
    ])]);

  return {
    ls(options: ListOptions, raw: RawFormat): Promise<Output> {
      return listOutput(client.logRules, options, raw, { resource: logRuleResource, noun: 'log rules', table: ruleTable });
    },

    async show(target: string, raw: RawFormat): Promise<Output> {
      const rule = await findRule(client, target);
      if (raw) return rendered(raw, { resource: logRuleResource, record: rule });
      return human(...fieldLines([
        ['id', String(rule.id)], ['position', String(rule.position)], ['label', rule.label], ['program', rule.program ?? '(any)'], ['pattern', rule.pattern],
        ['error_class', rule.error_class], ['component', rule.component ?? '(the key\'s, else the program)'], ['enabled', rule.enabled ? 'yes' : 'no'],
        ['created_at', datetime(rule.created_at)], ['updated_at', datetime(rule.updated_at)],
      ]));
    },

    async add(flags: LogRuleFlags): Promise<Output> {
      if (flags.label === undefined || flags.pattern === undefined || flags.errorClass === undefined) throw new RemoteUsageError('give the new rule\'s --label, --pattern and --error-class');
      const rule = await client.logRules.create({ ...ruleFields(flags), label: flags.label, pattern: flags.pattern, error_class: flags.errorClass });
      return human(`Created log rule ${describe(rule)} at position ${rule.position}`);
    },

    async edit(target: string, flags: LogRuleFlags): Promise<Output> {
      const changes = ruleFields(flags);
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help log-rules edit)');
      const rule = await findRule(client, target);
      await client.logRules.update(rule.id, changes);
      return human(`Updated log rule ${describe({ ...rule, label: changes.label ?? rule.label })}`);
    },

    async rm(target: string): Promise<Output> {
      const rule = await findRule(client, target);
      await client.logRules.delete(rule.id);
      return human(`Deleted log rule ${describe(rule)}`);
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** The options that set a rule's fields, shared by add and edit. */
function ruleFieldOptions(command: Command): Command {
  return command
    .option('--program <glob>', 'the programs it applies to, e.g. \'nova-*\' (default any; \'\' clears it)')
    .option('--component <name>', 'the component of its errors (default the key\'s, else the program; \'\' clears it)')
    .option('--position <n>', 'where it is tried among the rules, from 1 (default after the last)')
    .option('--enabled', 'apply it (as a new rule is)').option('--no-enabled', 'keep it but apply it not');
}

/** `cmi log-rules ls|show|add|edit|rm`: the rules that make matching log records errors. */
export function addRemoteLogRuleCommands(program: Command): void {
  const rules = program.command('log-rules').description('manage the rules that make matching syslog, journal and OTLP records errors, on a server');
  rawOptions(remote(rules.command('ls'), 'list the log rules in the order they are tried (a page, or --all)', 'cmi log-rules ls', 'cmi log-rules ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'rules a page (default the server\'s, 25)')
    .option('--all', 'every page')
    .action(async (options: ListOptions & RawFlags, command: Command) => run(command, options.xml, (c) => remoteLogRuleCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(rules.command('show <rule>'), 'print a log rule (by id or label)', 'cmi log-rules show \'Port flaps\'', 'cmi log-rules show 2 --json'))
    .action(async (target: string, options: RawFlags, command: Command) => run(command, options.xml, (c) => remoteLogRuleCommands(c).show(target, rawFormat(options))));

  ruleFieldOptions(remote(rules.command('add'), 'create a log rule on the server', 'cmi log-rules add --label \'Port flaps\' --program \'ovs-*\' --pattern \'*link state changed to down*\' --error-class \'ovs: port down\' --component network'))
    .requiredOption('--label <label>', 'the rule\'s name')
    .requiredOption('--pattern <glob>', 'a glob the whole message must match: * any run, ? one character, \\ a literal')
    .requiredOption('--error-class <class>', 'the error class of the records it matches')
    .action(async (options: LogRuleFlags, command: Command) => run(command, false, (c) => remoteLogRuleCommands(c).add(options)));

  ruleFieldOptions(remote(rules.command('edit <rule>'), 'change a log rule on the server (by id or label)', 'cmi log-rules edit \'Port flaps\' --no-enabled'))
    .option('--label <label>', 'new name')
    .option('--pattern <glob>', 'new glob of the message')
    .option('--error-class <class>', 'new error class')
    .action(async (target: string, options: LogRuleFlags, command: Command) => run(command, false, (c) => remoteLogRuleCommands(c).edit(target, options)));

  remote(rules.command('rm <rule>'), 'delete a log rule on the server', 'cmi log-rules rm \'Port flaps\'')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteLogRuleCommands(c).rm(target)));
}
