import { FieldErrors } from '../shared/problems.js';
import { flagOf, MAX_ID, stringField, stringList, unwrapRecord } from '../shared/request-body.js';
import type { LdapSettings, OidcSettings, SamlSettings } from './external-identity.js';
import { PROVIDER_KINDS } from './identity-provider.resource.js';

export { PROVIDER_KINDS };
/** The protocols an identity provider speaks (docs/security.md#identity-providers). */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** A provider's group (its name, or its full DN) given cmi roles and a user group at every sign-in. */
export interface ProviderMapping {
  group: string;
  role_ids: number[];
  user_group_id: number | null;
}

export type ProviderSettings = OidcSettings | SamlSettings | LdapSettings;

/** A provider as cmi keeps it, secrets included: never served as it is (see `servedProvider`). */
export interface IdentityProvider {
  id: number;
  kind: ProviderKind;
  label: string;
  enabled: boolean;
  settings: ProviderSettings;
  mappings: ProviderMapping[];
  jit_provisioning: boolean;
  created_at: Date;
  updated_at: Date;
}

export type ProviderFields = Omit<IdentityProvider, 'id' | 'created_at' | 'updated_at'>;

/** The settings of each kind that are secrets: write-only, answered as null, never logged or audited. */
export const SECRET_SETTINGS: Readonly<Record<ProviderKind, readonly string[]>> = { oidc: ['client_secret'], saml: [], ldap: ['bind_password'] };

/**
 * The settings whose change sends the kept secret elsewhere: whoever points a provider at another
 * server must give its secret again (as alert destinations' passwords: docs/security.md#identity-providers).
 */
const SECRET_BOUND_TO: Readonly<Record<ProviderKind, readonly string[]>> = { oidc: ['issuer', 'client_id'], saml: [], ldap: ['url', 'bind_dn'] };

const DEFAULTS: { [K in ProviderKind]: Record<string, unknown> } = {
  oidc: { issuer: '', client_id: '', client_secret: '', scopes: ['openid', 'email', 'profile'], login_claim: 'preferred_username', email_claim: 'email', groups_claim: 'groups' },
  saml: { name_id_format: 'persistent', login_attribute: 'uid', email_attribute: 'mail', groups_attribute: 'groups' },
  ldap: { url: '', bind_dn: '', bind_password: '', base_dn: '', user_filter: '', group_attribute: 'memberOf', start_tls: false, ca_certificate: '', allow_basic_auth: false },
};

/** What each setting is: its longest text, or a flag, or a list of names. */
type SettingShape = { text: number } | 'flag' | 'names';
const SHAPES: { [K in ProviderKind]: Record<string, SettingShape> } = {
  oidc: { issuer: { text: 2048 }, client_id: { text: 255 }, client_secret: { text: 1024 }, scopes: 'names', login_claim: { text: 255 }, email_claim: { text: 255 }, groups_claim: { text: 255 } },
  saml: { idp_metadata_url: { text: 2048 }, idp_metadata_xml: { text: 262_144 }, name_id_format: { text: 16 }, login_attribute: { text: 255 }, email_attribute: { text: 255 }, groups_attribute: { text: 255 } },
  ldap: {
    url: { text: 2048 }, bind_dn: { text: 1024 }, bind_password: { text: 1024 }, base_dn: { text: 1024 }, user_filter: { text: 1024 }, group_attribute: { text: 255 },
    start_tls: 'flag', ca_certificate: { text: 65_536 }, allow_basic_auth: 'flag',
  },
};

export const MAX_MAPPINGS = 100;
const MAX_ROLES_A_MAPPING = 50;
const MAX_SCOPES = 20;
const NAME = /^[\x21-\x7e]{1,255}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A JSON object or list as JSON or XML sends it: the value itself, or its JSON text (XML, a form). */
function structured(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

function urlOf(text: string, protocols: readonly string[]): URL | undefined {
  try {
    const url = new URL(text);
    return protocols.includes(url.protocol) && url.hostname !== '' && url.username === '' && url.password === '' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `host` (a URL's hostname) is this machine: the only place a provider may be spoken to without TLS. */
export const isLoopbackHost = (host: string): boolean => host === 'localhost' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);

/** Reads `settings` of a provider of `kind` over `current` (the kept ones), naming every bad setting. */
function readSettings(kind: ProviderKind, given: unknown, current: Record<string, unknown> | undefined, errors: FieldErrors): Record<string, unknown> {
  const out: Record<string, unknown> = { ...DEFAULTS[kind], ...current };
  if (given === undefined) return out;
  const value = structured(given);
  if (!isObject(value)) {
    errors.add('settings', 'must be an object');
    return out;
  }
  const shapes = SHAPES[kind];
  for (const [name, raw] of Object.entries(value)) {
    const shape = shapes[name];
    const field = `settings.${name}`;
    if (shape === undefined) {
      errors.add(field, `is not a setting of an ${kind} provider (its settings: ${Object.keys(shapes).join(', ')})`);
      continue;
    }
    if (shape === 'flag') {
      const flag = flagOf(raw);
      if (flag === undefined) errors.add(field, 'must be true or false');
      else out[name] = flag;
    } else if (shape === 'names') {
      const list = stringList(structured(raw));
      if (list === undefined || !list.every((item) => typeof item === 'string' && NAME.test(item))) errors.add(field, 'must be a list of names');
      else if (list.length > MAX_SCOPES) errors.add(field, `must hold at most ${MAX_SCOPES} names`);
      else out[name] = [...new Set(list as string[])];
    } else if (raw === null) out[name] = '';
    else if (typeof raw !== 'string' || raw.length > shape.text || raw.includes('\u0000')) errors.add(field, `must be text of at most ${shape.text} characters`);
    // A secret is kept as given; names and URLs without the spaces around them.
    else out[name] = SECRET_SETTINGS[kind].includes(name) || name === 'idp_metadata_xml' || name === 'ca_certificate' ? raw : raw.trim();
  }
  return out;
}

/** What a provider of its kind needs once the body is read: each missing or wrong setting named. */
function checkSettings(kind: ProviderKind, settings: Record<string, unknown>, errors: FieldErrors): void {
  const text = (name: string) => (typeof settings[name] === 'string' ? (settings[name]) : '');
  const required = (name: string) => {
    if (text(name) === '') errors.add(`settings.${name}`, `can't be blank for an ${kind} provider`);
  };
  // The claims and attributes read: each names one.
  for (const name of Object.keys(SHAPES[kind])) if (/_(claim|attribute)$/.test(name) && text(name) === '') errors.add(`settings.${name}`, "can't be blank");
  if (kind === 'oidc') {
    required('issuer');
    required('client_id');
    required('client_secret');
    const issuer = text('issuer') === '' ? undefined : urlOf(text('issuer'), ['https:', 'http:']);
    if (text('issuer') !== '' && (issuer === undefined || (issuer.protocol === 'http:' && !isLoopbackHost(issuer.hostname)) || issuer.search !== '' || issuer.hash !== '')) {
      errors.add('settings.issuer', 'must be an https URL without query or fragment (http only for this machine: localhost, 127.0.0.1, ::1)');
    }
  } else if (kind === 'saml') {
    const url = text('idp_metadata_url');
    const xml = text('idp_metadata_xml');
    if ((url === '') === (xml === '')) errors.add('settings', 'must give one of idp_metadata_url and idp_metadata_xml');
    if (url !== '') {
      const parsed = urlOf(url, ['https:', 'http:']);
      if (parsed === undefined || (parsed.protocol === 'http:' && !isLoopbackHost(parsed.hostname))) errors.add('settings.idp_metadata_url', 'must be an https URL (http only for this machine: localhost, 127.0.0.1, ::1)');
    }
    if (!['persistent', 'email'].includes(text('name_id_format'))) errors.add('settings.name_id_format', 'must be persistent or email (a transient NameID changes at every sign-in)');
    if (xml !== '' && !xml.includes('EntityDescriptor')) errors.add('settings.idp_metadata_xml', 'must be the identity provider\'s SAML metadata (an EntityDescriptor)');
  } else {
    required('url');
    required('user_filter');
    const url = text('url') === '' ? undefined : urlOf(text('url'), ['ldap:', 'ldaps:']);
    if (text('url') !== '' && (url === undefined || (url.pathname !== '' && url.pathname !== '/') || url.search !== '')) errors.add('settings.url', 'must be an ldap:// or ldaps:// URL of a host and port');
    else if (url !== undefined && url.protocol === 'ldap:' && settings.start_tls !== true && !isLoopbackHost(url.hostname)) {
      errors.add('settings.url', 'must be ldaps://, or ldap:// with start_tls true: passwords would travel in clear (plain ldap:// only for this machine)');
    }
    if (text('user_filter') !== '' && !text('user_filter').includes('{login}')) errors.add('settings.user_filter', 'must hold {login}, where the login typed goes');
    if (text('bind_dn') !== '') {
      required('base_dn');
      required('bind_password');
    }
    if (text('ca_certificate') !== '' && !text('ca_certificate').includes('-----BEGIN CERTIFICATE-----')) errors.add('settings.ca_certificate', 'must be PEM (-----BEGIN CERTIFICATE-----)');
  }
}

/** The mappings given: a list of `{group, role_ids, user_group_id}` (JSON, or its text in XML). */
function readMappings(given: unknown, errors: FieldErrors): ProviderMapping[] | undefined {
  const value = structured(given);
  const list = Array.isArray(value) ? value : isObject(value) && Object.keys(value).length === 1 && 'item' in value ? [value.item].flat() : undefined;
  if (list === undefined) {
    errors.add('mappings', 'must be a list of {"group", "role_ids", "user_group_id"}');
    return undefined;
  }
  if (list.length > MAX_MAPPINGS) {
    errors.add('mappings', `must hold at most ${MAX_MAPPINGS} mappings`);
    return undefined;
  }
  const out: ProviderMapping[] = [];
  list.forEach((item: unknown, index) => {
    const at = `mappings[${index}]`;
    if (!isObject(item)) return errors.add(at, 'must be an object with group, role_ids and user_group_id');
    const unknown = Object.keys(item).filter((key) => !['group', 'role_ids', 'user_group_id'].includes(key));
    if (unknown.length > 0) return errors.add(at, `has no field ${unknown.join(', ')}`);
    const group = typeof item.group === 'string' ? item.group.trim() : '';
    if (group === '' || group.length > 1024) return errors.add(`${at}.group`, 'must be a group\'s name or DN of 1 to 1024 characters');
    const roles = stringList(structured(item.role_ids ?? []));
    const roleIds = roles?.map((id) => (typeof id === 'number' ? id : typeof id === 'string' && /^\d{1,10}$/.test(id) ? Number(id) : NaN));
    if (roleIds === undefined || !roleIds.every((id) => Number.isInteger(id) && id >= 1 && id <= MAX_ID) || roleIds.length > MAX_ROLES_A_MAPPING) {
      return errors.add(`${at}.role_ids`, `must be a list of at most ${MAX_ROLES_A_MAPPING} role ids`);
    }
    const groupId = item.user_group_id === undefined || item.user_group_id === null || item.user_group_id === '' ? null : Number(item.user_group_id);
    if (groupId !== null && (!Number.isInteger(groupId) || groupId < 1 || groupId > MAX_ID)) return errors.add(`${at}.user_group_id`, 'must be a user group id or null');
    out.push({ group, role_ids: [...new Set(roleIds)], user_group_id: groupId });
  });
  return out;
}

/**
 * The fields of a provider's create or edit body (wrapped in `identity_provider` or not), every bad one
 * named in one 422 (docs/api.md#identity-providers). `current` is the provider edited: what the body
 * leaves out is kept (its settings one by one), and its kind never changes.
 */
export function readProvider(body: unknown, current: ProviderFields | undefined): ProviderFields {
  const fields = unwrapRecord(body ?? {}, 'identity_provider');
  const errors = new FieldErrors();
  let kind = current?.kind;
  if (fields.kind !== undefined || current === undefined) {
    if (typeof fields.kind !== 'string' || !PROVIDER_KINDS.includes(fields.kind as ProviderKind)) errors.add('kind', `must be one of ${PROVIDER_KINDS.join(', ')}`);
    else if (current !== undefined && fields.kind !== current.kind) errors.add('kind', `cannot change (this provider is ${current.kind}): make a new one`);
    else kind = fields.kind as ProviderKind;
  }
  const label = stringField(fields, 'label', errors, { required: current === undefined, max: 255 });
  if (label !== undefined && label.trim() === '') errors.add('label', "can't be blank");
  const flag = (name: 'enabled' | 'jit_provisioning', fallback: boolean) => {
    if (fields[name] === undefined || fields[name] === null) return fallback;
    const value = flagOf(fields[name]);
    if (value === undefined) errors.add(name, 'must be true or false');
    return value ?? fallback;
  };
  const enabled = flag('enabled', current?.enabled ?? true);
  const jit = flag('jit_provisioning', current?.jit_provisioning ?? false);
  const mappings = fields.mappings === undefined || fields.mappings === null ? (current?.mappings ?? []) : readMappings(fields.mappings, errors);
  const unknown = Object.keys(fields).filter((key) => !['kind', 'label', 'enabled', 'jit_provisioning', 'settings', 'mappings', 'id', 'created_at', 'updated_at'].includes(key));
  for (const key of unknown) errors.add(key, 'is not a field of an identity provider');
  if (kind === undefined) {
    errors.throwIfAny();
    throw new Error('unreachable: a provider without a kind');
  }
  const currentSettings = current?.settings as Record<string, unknown> | undefined;
  const settings = readSettings(kind, fields.settings, currentSettings, errors);
  errors.throwIfAny();
  checkSettings(kind, settings, errors);
  // A kept secret must not follow the provider to another server unless given again.
  if (currentSettings !== undefined) {
    const given = isObject(structured(fields.settings)) ? (structured(fields.settings) as Record<string, unknown>) : {};
    const moved = SECRET_BOUND_TO[kind].some((name) => settings[name] !== currentSettings[name]);
    for (const secret of SECRET_SETTINGS[kind]) {
      if (moved && currentSettings[secret] !== '' && given[secret] === undefined) errors.add(`settings.${secret}`, `must be given again when ${SECRET_BOUND_TO[kind].join(' or ')} changes`);
    }
  }
  errors.throwIfAny();
  return { kind, label: label?.trim() ?? (current?.label as string), enabled, jit_provisioning: jit, settings: settings as unknown as ProviderSettings, mappings: mappings ?? [] };
}

/** A provider as the API serves it (docs/api.md#identity-providers): its secrets null, its settings and mappings as JSON text. */
export interface ServedProvider {
  id: number;
  kind: ProviderKind;
  label: string;
  enabled: boolean;
  settings: string;
  mappings: string;
  jit_provisioning: boolean;
  created_at: Date;
  updated_at: Date;
}

/** The settings as served: each secret null, whether it is set or not. */
export function shownSettings(provider: Pick<IdentityProvider, 'kind' | 'settings'>): Record<string, unknown> {
  const shown: Record<string, unknown> = { ...provider.settings };
  for (const secret of SECRET_SETTINGS[provider.kind]) shown[secret] = null;
  return shown;
}

export const servedProvider = (provider: IdentityProvider): ServedProvider => ({ ...provider, settings: JSON.stringify(shownSettings(provider)), mappings: JSON.stringify(provider.mappings) });

/** A group's name from its DN's first value (`cn=ops,ou=groups,dc=example,dc=org` is `ops`), or the name itself. */
function groupName(group: string): string {
  const first = /^[A-Za-z][\w-]*=((?:\\.|[^,\\])*)(?:,|$)/.exec(group);
  return first && group.includes('=') ? (first[1] as string).replace(/\\(.)/g, '$1') : group;
}

/** Whether a mapping's `group` names one of `groups`: the same name or the same full DN, case aside. */
export function mappingMatches(mapping: Pick<ProviderMapping, 'group'>, groups: readonly string[]): boolean {
  const wanted = mapping.group.toLowerCase();
  return groups.some((group) => group.toLowerCase() === wanted || groupName(group).toLowerCase() === wanted);
}
