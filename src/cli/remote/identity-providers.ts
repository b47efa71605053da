import { readFileSync } from 'node:fs';
import { type Command, Option } from 'commander';
import type { CmiClient, IdentityProvider, IdentityProviderChanges, IdentityProviderKind, IdentityProviderMapping, NewIdentityProvider } from '../../client/index.js';
import { identityProviderResource as resource, PROVIDER_KINDS } from '../../identity/identity-provider.resource.js';
import { rawFormat, rawOptions, remote, run } from './command.js';
import { type Connection, RemoteUsageError } from './connection.js';
import { type RawFormat, rendered } from './records-output.js';
import { roleIds } from './roles.js';
import { findGroup } from './groups.js';
import { cell, human, type Line, type Output, styled, table } from '../common/output.js';
import { cliEnv, fromCwd } from '../common/io.js';

const datetime = (value: Date) => `${value.toISOString().slice(0, 19)}+00:00`;
const describe = (provider: Pick<IdentityProvider, 'id' | 'label' | 'kind'>) => `${provider.id} "${provider.label}" (${provider.kind})`;

/**
 * The secret setting of each kind and the environment variable it is read from: never an option, which
 * every local user sees in the process list (docs/cli.md#cmi-identity-providers), as alert destinations' secrets.
 */
const SECRETS: Readonly<Record<IdentityProviderKind, Readonly<Record<string, string>>>> = {
  oidc: { client_secret: 'CMI_PROVIDER_CLIENT_SECRET' },
  saml: {},
  ldap: { bind_password: 'CMI_PROVIDER_BIND_PASSWORD' },
};
const SECRET_NAMES: ReadonlyMap<string, string> = new Map(Object.values(SECRETS).flatMap((secrets) => Object.entries(secrets)));

function positive(raw: string | undefined, name: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^[1-9]\d{0,9}$/.test(raw)) throw new RemoteUsageError(`${name} must be a positive integer (got "${raw}")`);
  return Number(raw);
}

const providerId = (raw: string) => positive(raw, 'the provider id') as number;

/** `NAME=VALUE` of `--setting` or `--setting-file`, split at the first `=`. */
function nameAndValue(raw: string, option: string, what: string): [string, string] {
  const at = raw.indexOf('=');
  const name = at < 0 ? '' : raw.slice(0, at);
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(name)) throw new RemoteUsageError(`${option} must be NAME=${what}, e.g. ${option} issuer=https://sso.example.com (got "${raw}")`);
  return [name, raw.slice(at + 1)];
}

/** A file's text for `--setting-file`, the newline that ends it dropped. */
function fileText(name: string, path: string): string {
  try {
    return readFileSync(fromCwd(path), 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new RemoteUsageError(`--setting-file ${name}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export interface SettingFlags {
  setting?: string[];
  settingFile?: string[];
}

/**
 * The settings `--setting NAME=VALUE` and `--setting-file NAME=PATH` give (each value as text: the server
 * reads `true`/`false` for a flag and names separated by commas for a list), and the secrets of `kind`
 * from the environment. A secret as a `--setting` is refused.
 */
export function settingsOf(kind: IdentityProviderKind, flags: SettingFlags, env: NodeJS.ProcessEnv = cliEnv()): Record<string, string> {
  const settings: Record<string, string> = {};
  const put = (name: string, value: string) => {
    if (name in settings) throw new RemoteUsageError(`setting ${name} is given twice`);
    settings[name] = value;
  };
  for (const raw of flags.setting ?? []) {
    const [name, value] = nameAndValue(raw, '--setting', 'VALUE');
    const variable = SECRET_NAMES.get(name);
    if (variable !== undefined) throw new RemoteUsageError(`${name} is a secret: give it in env ${variable} or with --setting-file ${name}=PATH, never as an option (every local user sees a command's options in the process list)`);
    put(name, value);
  }
  for (const raw of flags.settingFile ?? []) {
    const [name, path] = nameAndValue(raw, '--setting-file', 'PATH');
    put(name, fileText(name, path));
  }
  for (const [name, variable] of Object.entries(SECRETS[kind])) {
    const value = env[variable];
    if (value === undefined || value === '') continue;
    if (name in settings) throw new RemoteUsageError(`give ${name} in env ${variable} or with --setting-file, not both`);
    settings[name] = value;
  }
  return settings;
}

/** One `--map GROUP=ROLE[,ROLE][:USER_GROUP]`: the group (a name or a DN, itself holding `=`) ends at the last `=`. */
interface MapFlag {
  group: string;
  roles: string[];
  userGroup: string | undefined;
}

function mapFlag(raw: string): MapFlag {
  const at = raw.lastIndexOf('=');
  const group = at < 0 ? '' : raw.slice(0, at).trim();
  const rest = raw.slice(at + 1);
  const colon = rest.indexOf(':');
  const roles = (colon < 0 ? rest : rest.slice(0, colon)).split(',').map((role) => role.trim()).filter((role) => role !== '');
  const userGroup = colon < 0 ? undefined : rest.slice(colon + 1).trim();
  if (group === '' || (roles.length === 0 && !userGroup)) throw new RemoteUsageError(`--map must be GROUP=ROLE[,ROLE][:USER_GROUP], e.g. --map cmi-admins=admin or --map "cn=ops,ou=groups,dc=example,dc=org=support:ops" (got "${raw}")`);
  return { group, roles, userGroup: userGroup || undefined };
}

/** The mappings `--map` gives, roles and user groups named by id, identifier or label looked up on the server. */
async function mappingsOf(client: CmiClient, raw: readonly string[]): Promise<IdentityProviderMapping[]> {
  const flags = raw.map(mapFlag);
  const ids = await roleIds(client, flags.flatMap((flag) => flag.roles));
  const mappings: IdentityProviderMapping[] = [];
  let next = 0;
  for (const flag of flags) {
    const role_ids = ids.slice(next, next + flag.roles.length);
    next += flag.roles.length;
    const user_group_id = flag.userGroup === undefined ? null : (await findGroup(client, flag.userGroup)).id;
    mappings.push({ group: flag.group, role_ids, user_group_id });
  }
  return mappings;
}

/** A mapping as `--map` takes it, its roles and user group by identifier (by id when the server has none by it). */
async function mappingTexts(client: CmiClient, mappings: readonly IdentityProviderMapping[]): Promise<string[]> {
  if (mappings.length === 0) return [];
  const roles = new Map<number, string>();
  for await (const role of client.roles.all({ perPage: 1000 })) roles.set(role.id, role.identifier);
  const groups = new Map<number, string>();
  if (mappings.some((mapping) => mapping.user_group_id !== null)) for await (const group of client.userGroups.all({ perPage: 1000 })) groups.set(group.id, group.identifier);
  return mappings.map((mapping) => {
    const named = mapping.role_ids.map((id) => roles.get(id) ?? String(id)).join(',');
    return `${mapping.group}=${named}${mapping.user_group_id === null ? '' : `:${groups.get(mapping.user_group_id) ?? String(mapping.user_group_id)}`}`;
  });
}

/** A setting's value for people: a secret never (the API answers it null), a list by commas, a text of several lines by its first. */
function settingText(name: string, value: unknown): string {
  if (SECRET_NAMES.has(name)) return '(write-only, never shown)';
  if (value === null || value === undefined || value === '') return '-';
  if (Array.isArray(value)) return value.join(',');
  if (typeof value !== 'string') return JSON.stringify(value);
  const lines = value.split(/\r\n|\r|\n/);
  return lines.length > 1 ? `${lines[0]!} … (${lines.length} lines)` : value;
}

type ProviderFlags = SettingFlags & { label?: string; map?: string[] | false; jit?: boolean; enable?: boolean; disable?: boolean };

/** The fields the flags give, but the settings (which need the kind). */
async function providerFields(client: CmiClient, flags: ProviderFlags): Promise<Omit<IdentityProviderChanges, 'settings'>> {
  if (flags.enable && flags.disable) throw new RemoteUsageError('give --enable or --disable, not both');
  return {
    ...(flags.label !== undefined ? { label: flags.label } : {}),
    ...(flags.enable ? { enabled: true } : flags.disable ? { enabled: false } : {}),
    ...(flags.jit !== undefined ? { jit_provisioning: flags.jit } : {}),
    ...(flags.map === false ? { mappings: [] } : flags.map !== undefined ? { mappings: await mappingsOf(client, flags.map) } : {}),
  };
}

function kindOf(raw: string): IdentityProviderKind {
  if (!(PROVIDER_KINDS as readonly string[]).includes(raw)) throw new RemoteUsageError(`--kind must be one of ${PROVIDER_KINDS.join(', ')} (got "${raw}")`);
  return raw as IdentityProviderKind;
}

/** `cmi identity-providers ls|show|add|edit|rm` against a server (docs/cli.md#cmi-identity-providers). */
export function remoteIdentityProviderCommands({ client }: Connection) {
  const providerTable = (providers: IdentityProvider[]): Line[] =>
    table([
      ['ID', 'KIND', 'LABEL', 'ENABLED', 'JIT'],
      ...providers.map((p) => [String(p.id), p.kind, cell(p.label, 40), p.enabled ? 'yes' : 'no', p.jit_provisioning ? 'yes' : 'no']),
    ], (row, column) => (column === 3 && !providers[row]!.enabled ? 'yellow' : undefined));

  return {
    async ls(options: { page?: string; perPage?: string; all?: boolean }, raw: RawFormat): Promise<Output> {
      const page = positive(options.page, '--page');
      const perPage = positive(options.perPage, '--per-page');
      if (options.all && page !== undefined) throw new RemoteUsageError('--all walks every page: leave out --page');
      if (options.all) {
        const providers: IdentityProvider[] = [];
        for await (const provider of client.identityProviders.all({ perPage })) providers.push(provider);
        if (raw) return rendered(raw, { resource, records: providers.map(asServed) });
        return human(...providerTable(providers), `${providers.length} identity providers`);
      }
      const result = await client.identityProviders.list({ page, perPage });
      if (raw) return rendered(raw, { resource, records: result.items.map(asServed) });
      const pages = Math.max(1, Math.ceil(result.total / result.limit));
      return human(...providerTable(result.items), `${result.items.length} of ${result.total} identity providers (page ${result.page} of ${pages})`);
    },

    async show(id: string, raw: RawFormat): Promise<Output> {
      const provider = await client.identityProviders.get(providerId(id));
      if (raw) return rendered(raw, { resource, record: asServed(provider) });
      const lines: Array<readonly [string, string]> = [
        ['id', String(provider.id)],
        ['kind', provider.kind],
        ['label', provider.label],
        ['enabled', String(provider.enabled)],
        ['jit_provisioning', String(provider.jit_provisioning)],
        ...Object.entries(provider.settings).map(([name, value]) => [`settings.${name}`, settingText(name, value)] as const),
      ];
      const mappings = await mappingTexts(client, provider.mappings);
      if (mappings.length === 0) lines.push(['mappings', '-']);
      else mappings.forEach((text, index) => lines.push([`mappings[${index}]`, text]));
      lines.push(['created_at', datetime(provider.created_at)], ['updated_at', datetime(provider.updated_at)]);
      const width = Math.max(...lines.map(([name]) => name.length));
      return human(...lines.map(([name, text]): Line => [styled('bold', `${name}:`.padEnd(width + 1)), ` ${cell(text)}`]));
    },

    async add(kind: string, flags: ProviderFlags & { label: string }): Promise<Output> {
      const known = kindOf(kind);
      const fields = { ...(await providerFields(client, flags)), kind: known, label: flags.label, settings: settingsOf(known, flags) } satisfies NewIdentityProvider;
      const provider = await client.identityProviders.create(fields);
      return human(`Created identity provider ${describe(provider)}`);
    },

    async edit(id: string, flags: ProviderFlags): Promise<Output> {
      const current = await client.identityProviders.get(providerId(id));
      const settings = settingsOf(current.kind, flags);
      const changes: IdentityProviderChanges = { ...(await providerFields(client, flags)), ...(Object.keys(settings).length > 0 ? { settings } : {}) };
      if (Object.keys(changes).length === 0) throw new RemoteUsageError('nothing to change: give at least one of the options (cmi help identity-providers edit)');
      await client.identityProviders.update(current.id, changes);
      const changed = await client.identityProviders.get(current.id);
      return human(`Updated identity provider ${describe(changed)}`);
    },

    async rm(id: string): Promise<Output> {
      const provider = await client.identityProviders.get(providerId(id));
      await client.identityProviders.delete(provider.id);
      return human(`Deleted identity provider ${describe(provider)}; the accounts it signed in stay, unlinked`);
    },
  };
}

/** A provider as the renderers take it: its settings and mappings as their JSON text, as the server keeps them. */
const asServed = (provider: IdentityProvider) => ({ ...provider, settings: JSON.stringify(provider.settings), mappings: JSON.stringify(provider.mappings) });

const collect = (value: string, previous: string[] = []) => [...previous, value];

function providerOptions(command: Command): Command {
  return command
    .addOption(new Option('--setting <name=value>', 'a setting (repeat for each), e.g. issuer=https://sso.example.com, scopes=openid,email,groups, start_tls=true; secrets from the environment: CMI_PROVIDER_CLIENT_SECRET (oidc), CMI_PROVIDER_BIND_PASSWORD (ldap)').argParser(collect))
    .addOption(new Option('--setting-file <name=path>', 'a setting read from a file (repeat for each), e.g. ca_certificate=ca.pem, idp_metadata_xml=idp.xml, client_secret=/run/secrets/oidc').argParser(collect))
    .addOption(new Option('--map <group=roles:user-group>', 'GROUP=ROLE[,ROLE][:USER_GROUP]: the provider\'s group (name or DN) gives these roles and user group, by id, identifier or label (repeat for each; replaces the mappings)').argParser(collect))
    .option('--jit', 'make the account of someone new at their first sign-in')
    .option('--no-jit', 'sign in only people who have an account')
    .option('--enable', 'enabled: people sign in through it')
    .option('--disable', 'disabled: no one signs in through it');
}

/** `cmi identity-providers ls|show|add|edit|rm`: the OpenID Connect, SAML and LDAP providers of a server (docs/cli.md#cmi-identity-providers). */
export function addRemoteIdentityProviderCommands(program: Command): void {
  const providers = program.command('identity-providers').description('identity providers on a server: OpenID Connect, SAML and LDAP sign-in (docs/security.md#identity-providers)');
  rawOptions(remote(providers.command('ls'), 'list the identity providers (never their secrets)', 'cmi identity-providers ls', 'cmi identity-providers ls --all --json'))
    .option('--page <n>', 'page (default 1)')
    .option('--per-page <n>', 'providers a page')
    .option('--all', 'every page')
    .action(async (options: { page?: string; perPage?: string; all?: boolean; json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteIdentityProviderCommands(c).ls(options, rawFormat(options))));

  rawOptions(remote(providers.command('show <id>'), 'print an identity provider: its settings (never its secrets) and mappings', 'cmi identity-providers show 1'))
    .action(async (id: string, options: { json?: boolean; xml?: boolean }, command: Command) =>
      run(command, options.xml, (c) => remoteIdentityProviderCommands(c).show(id, rawFormat(options))));

  providerOptions(remote(providers.command('add'), 'add an identity provider; its secret from the environment or a file, never an option (the process list shows those)',
    'CMI_PROVIDER_CLIENT_SECRET=... cmi identity-providers add --kind oidc --label "Corp SSO" --setting issuer=https://sso.example.com/realms/corp --setting client_id=cmi --setting scopes=openid,email,groups --map cmi-admins=admin --jit',
    'CMI_PROVIDER_BIND_PASSWORD=... cmi identity-providers add --kind ldap --label Directory --setting url=ldaps://ldap.example.com --setting bind_dn=cn=cmi,dc=example,dc=org --setting base_dn=dc=example,dc=org --setting "user_filter=(uid={login})" --setting-file ca_certificate=ca.pem'))
    .requiredOption('--kind <kind>', 'oidc, saml or ldap')
    .requiredOption('--label <label>', 'its name, on the sign-in page\'s button')
    .action(async (options: ProviderFlags & { kind: string; label: string }, command: Command) =>
      run(command, false, (c) => remoteIdentityProviderCommands(c).add(options.kind, options)));

  providerOptions(remote(providers.command('edit <id>'), 'change an identity provider: the settings given (the others are kept); a secret again, from the environment or a file, when its server changes', 'cmi identity-providers edit 1 --disable', 'cmi identity-providers edit 1 --setting scopes=openid,email --map cmi-admins=admin --map support=support:helpdesk'))
    .option('--label <label>', 'new label')
    .option('--no-map', 'no mappings: everyone gets the default role')
    .action(async (id: string, options: ProviderFlags, command: Command) =>
      run(command, false, (c) => remoteIdentityProviderCommands(c).edit(id, options)));

  remote(providers.command('rm <id>'), 'delete an identity provider; the accounts it signed in stay, unlinked', 'cmi identity-providers rm 2')
    .action(async (id: string, _options: unknown, command: Command) => run(command, false, (c) => remoteIdentityProviderCommands(c).rm(id)));
}
