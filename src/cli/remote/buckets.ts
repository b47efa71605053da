import type { Command } from 'commander';
import type { BillingBucket, BucketChanges, CmiClient } from '../../client/index.js';
import { bucketResource } from '../../buckets/bucket.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { datetime, fieldLines, listOutput, type ListOptions, pick } from './listing.js';
import { type RawFormat, rendered } from './records-output.js';
import { cell, human, type Line, type Output, table } from '../common/output.js';

const describe = (bucket: BillingBucket) => `${bucket.id} "${bucket.label}"`;
const yesNo = (value: boolean) => (value ? 'yes' : 'no');
const FLAGS = ['show_price', 'allows_kms', 'allows_mak', 'allows_own'] as const;

/** The bucket a command names: an id, else a label (docs/cli.md#billing-buckets). */
export async function findBucket(client: CmiClient, target: string): Promise<BillingBucket> {
  if (/^\d+$/.test(target)) return client.buckets.get(Number(target));
  return pick(client.buckets.all({ perPage: 1000 }), target, 'bucket');
}

/** The id of the bucket `target` names: an id as it is (the server refuses one no bucket has), else a label looked up. */
export async function bucketId(client: CmiClient, target: string): Promise<number> {
  return /^\d+$/.test(target) ? Number(target) : (await findBucket(client, target)).id;
}

export interface BucketFlags {
  label?: string;
  currencyCode?: string;
  monthlyPrice?: string;
  showPrice?: boolean;
  allowsKms?: boolean;
  allowsMak?: boolean;
  allowsOwn?: boolean;
}

/** The fields the flags set; a price that is no number goes as given, for the server to refuse in its words. */
function bucketFields(flags: BucketFlags): BucketChanges {
  const fields: BucketChanges = {};
  if (flags.label !== undefined) fields.label = flags.label;
  if (flags.currencyCode !== undefined) fields.currency_code = flags.currencyCode;
  if (flags.monthlyPrice !== undefined) fields.monthly_price = /^\d+(\.\d+)?$/.test(flags.monthlyPrice) ? Number(flags.monthlyPrice) : flags.monthlyPrice;
  const given = { show_price: flags.showPrice, allows_kms: flags.allowsKms, allows_mak: flags.allowsMak, allows_own: flags.allowsOwn };
  for (const name of FLAGS) if (given[name] !== undefined) fields[name] = given[name];
  return fields;
}

/** `cmi buckets ls|show|add|edit|rm` against a server. */
export function remoteBucketCommands({ client }: Connection) {
  const bucketTable = (buckets: BillingBucket[]): Line[] =>
    table([['ID', 'LABEL', 'CURRENCY', 'MONTHLY PRICE', 'SHOW PRICE', 'KMS', 'MAK', 'OWN'], ...buckets.map((b) => [
      String(b.id), cell(b.label), cell(b.currency_code), String(b.monthly_price), yesNo(b.show_price), yesNo(b.allows_kms), yesNo(b.allows_mak), yesNo(b.allows_own),
    ])]);

  return {
    ls(options: ListOptions, raw: RawFormat): Promise<Output> {
      return listOutput(client.buckets, options, raw, { resource: bucketResource, noun: 'buckets', table: bucketTable });
    },

    async show(target: string, raw: RawFormat): Promise<Output> {
      const bucket = await findBucket(client, target);
      if (raw) return rendered(raw, { resource: bucketResource, record: bucket });
      return human(...fieldLines([
        ['id', String(bucket.id)], ['label', bucket.label], ['currency_code', bucket.currency_code], ['monthly_price', String(bucket.monthly_price)],
        ...FLAGS.map((name): [string, string] => [name, yesNo(bucket[name])]),
        ['created_at', datetime(bucket.created_at)], ['updated_at', datetime(bucket.updated_at)],
      ]));
    },

    async add(flags: BucketFlags): Promise<Output> {
      if (flags.label === undefined) throw new RemoteUsageError('give the new bucket\'s --label');
      const bucket = await client.buckets.create({ ...bucketFields(flags), label: flags.label });
      return human(`Created bucket ${describe(bucket)}`);
    },

    async edit(target: string, flags: BucketFlags): Promise<Output> {
      const changes = bucketFields(flags);
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help buckets edit)');
      const bucket = await findBucket(client, target);
      await client.buckets.update(bucket.id, changes);
      return human(`Updated bucket ${describe({ ...bucket, label: changes.label ?? bucket.label })}`);
    },

    async rm(target: string): Promise<Output> {
      const bucket = await findBucket(client, target);
      await client.buckets.delete(bucket.id);
      return human(`Deleted bucket ${describe(bucket)}`);
    },
  };
}

type RawFlags = { json?: boolean; xml?: boolean };

/** The options that set a bucket's fields, shared by add and edit; each flag has its --no- form. */
function bucketFieldOptions(command: Command): Command {
  return command
    .option('--currency-code <code>', 'three capital letters, e.g. EUR (default USD)')
    .option('--monthly-price <price>', 'a number of at least 0 (default 0)')
    .option('--show-price', 'show the price').option('--no-show-price', 'do not show the price (as a new bucket has it)')
    .option('--allows-kms', 'allow KMS').option('--no-allows-kms', 'do not allow KMS (as a new bucket has it)')
    .option('--allows-mak', 'allow MAK').option('--no-allows-mak', 'do not allow MAK (as a new bucket has it)')
    .option('--allows-own', 'allow own licences').option('--no-allows-own', 'do not allow own licences (as a new bucket has it)');
}

/** `cmi buckets ls|show|add|edit|rm`: OnApp's billing buckets (cmi bills nothing by them). */
export function addRemoteBucketCommands(program: Command): void {
  const buckets = program.command('buckets').description('manage billing buckets (labels with OnApp\'s fields; cmi bills nothing) on a server');
  rawOptions(remote(buckets.command('ls'), 'list billing buckets on the server (a page, or --all)', 'cmi buckets ls', 'cmi buckets ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'buckets a page (default the server\'s, 25)')
    .option('--all', 'every page')
    .action(async (options: ListOptions & RawFlags, command: Command) => run(command, options.xml, (c) => remoteBucketCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(buckets.command('show <bucket>'), 'print a billing bucket (by id or label)', 'cmi buckets show Gold', 'cmi buckets show 2 --xml'))
    .action(async (target: string, options: RawFlags, command: Command) => run(command, options.xml, (c) => remoteBucketCommands(c).show(target, rawFormat(options))));

  bucketFieldOptions(remote(buckets.command('add'), 'create a billing bucket on the server', 'cmi buckets add --label Silver --currency-code EUR --monthly-price 12.5 --show-price'))
    .requiredOption('--label <label>', 'the bucket\'s name')
    .action(async (options: BucketFlags, command: Command) => run(command, false, (c) => remoteBucketCommands(c).add(options)));

  bucketFieldOptions(remote(buckets.command('edit <bucket>'), 'change a billing bucket on the server (by id or label)', 'cmi buckets edit Silver --monthly-price 15 --no-show-price'))
    .option('--label <label>', 'new name')
    .action(async (target: string, options: BucketFlags, command: Command) => run(command, false, (c) => remoteBucketCommands(c).edit(target, options)));

  remote(buckets.command('rm <bucket>'), 'delete a billing bucket on the server (not one that users belong to)', 'cmi buckets rm Silver')
    .action(async (target: string, _options: unknown, command: Command) => run(command, false, (c) => remoteBucketCommands(c).rm(target)));
}
