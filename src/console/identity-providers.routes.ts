import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type IdentityProvider, PROVIDER_KINDS, type ProviderKind } from '../identity/identity-provider.js';
import { parseId } from '../http/route-params.js';
import { type Actor, may } from '../roles/authorization.js';
import { Unprocessable } from '../shared/problems.js';
import { consoleRoute, type ConsoleServices, everyRecord, formOf, pageContext, sendPage } from './console-page.js';
import {
  confirmDeleteProviderPage, defaultValues, type MappingChoices, type MappingRow, newProviderPage, pickKindPage, type ProviderFormValues,
  providerPage, type ProviderView, providersListPage, rowField, SETTING_FIELDS, valuesOf,
} from './identity-providers-pages.js';

type WithId = { Params: { id: string }; Querystring: Record<string, string | string[] | undefined> };

const NOTICES: Record<string, string> = {
  created: 'Provider created: register cmi at it with the URLs below.',
  saved: 'Saved.',
  enabled: 'Enabled: it is offered at sign-in.',
  disabled: 'Disabled: nobody signs in through it until it is enabled again.',
  deleted: 'Provider deleted.',
};
const noticeOf = (query: WithId['Querystring']) => (typeof query.notice === 'string' ? NOTICES[query.notice] : undefined);

/** The most providers the page lists (an installation has a few). */
const LISTED = 1000;
/** The most mapping rows a form is read for (the API's limit is 100 mappings). */
const MAX_ROWS = 200;

/** The mapping rows of the form, in order: removed rows and rows left empty are left out. */
function rowsOf(form: URLSearchParams): MappingRow[] {
  const count = Math.min(MAX_ROWS, Number.parseInt(form.get('mapping_rows') ?? '0', 10) || 0);
  const rows: MappingRow[] = [];
  for (let i = 0; i < count; i++) {
    if (form.get(rowField(i, 'remove')) !== null) continue;
    // Checkboxes send one value each; a field of typed ids (a viewer who may not see roles) sends them in one.
    const roleIds = form.getAll(rowField(i, 'role_ids')).flatMap((value) => value.split(/[\s,]+/)).filter((id) => id !== '');
    const row = { group: (form.get(rowField(i, 'group')) ?? '').trim(), role_ids: roleIds, user_group_id: (form.get(rowField(i, 'user_group_id')) ?? '').trim() };
    if (row.group !== '' || row.role_ids.length > 0 || row.user_group_id !== '') rows.push(row);
  }
  return rows;
}

/** The settings of the form: a secret left empty is not sent, so the kept one stays (identity/identity-provider.ts). */
function settingsOf(kind: ProviderKind, form: URLSearchParams): Record<string, unknown> {
  const settings: Record<string, unknown> = {};
  for (const field of SETTING_FIELDS[kind]) {
    const value = form.get(field.name);
    if (field.control === 'flag') settings[field.name] = value === 'true';
    else if (field.control === 'secret') {
      if (value !== null && value !== '') settings[field.name] = value;
    } else if (field.control === 'names') settings[field.name] = (value ?? '').split(/[\s,]+/).filter((name) => name !== '');
    else if (value !== null) settings[field.name] = value;
  }
  return settings;
}

/**
 * A provider's form as the API's request body (identity/identity-providers.service.ts reads and checks
 * it), and what the form showed, to show again after a 422 (secrets never).
 */
function bodyOf(kind: ProviderKind, form: URLSearchParams, isNew: boolean): { body: Record<string, unknown>; typed: ProviderFormValues } {
  const settings = settingsOf(kind, form);
  const mappings = rowsOf(form);
  const body: Record<string, unknown> = { label: form.get('label') ?? '', jit_provisioning: form.get('jit_provisioning') === 'true', settings, mappings };
  if (isNew) Object.assign(body, { kind, enabled: form.get('enabled') === 'true' });
  const shown: Record<string, string | boolean> = {};
  for (const field of SETTING_FIELDS[kind]) {
    const value = settings[field.name];
    if (field.control === 'secret') continue;
    shown[field.name] = typeof value === 'boolean' ? value : Array.isArray(value) ? value.join(' ') : typeof value === 'string' ? value : '';
  }
  return { body, typed: { label: body.label as string, enabled: form.get('enabled') === 'true', jit_provisioning: body.jit_provisioning as boolean, settings: shown, mappings } };
}

const kindOf = (value: unknown): ProviderKind | undefined => (typeof value === 'string' && PROVIDER_KINDS.includes(value as ProviderKind) ? (value as ProviderKind) : undefined);

/** Identity providers (docs/console.md#identity-providers): every action decided by identity/identity-providers.service.ts, as for the API. */
export function consoleIdentityProvidersRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { identityProviders: providers, roles, userGroups, publicUrl } = services;
  if (!providers) return;
  const baseOf = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;
  const see = (id: number, notice: string) => `/console/identity-providers/${id}?notice=${notice}`;

  /** The roles and user groups the mappings offer by name: those the viewer may see. */
  async function choices(viewer: Actor): Promise<MappingChoices> {
    const roleChoices = may(viewer, 'roles.read') ? await everyRecord((limit, offset) => roles.list(viewer, limit, offset)) : undefined;
    const userGroupChoices = may(viewer, 'user_groups.read') ? await everyRecord((limit, offset) => userGroups.list(viewer, limit, offset)) : undefined;
    return { roleChoices, userGroupChoices };
  }

  async function show(request: FastifyRequest<WithId>, reply: FastifyReply, provider: IdentityProvider, extra: Partial<ProviderView> & { status?: number } = {}) {
    const view: ProviderView = { provider, base: baseOf(request), values: valuesOf(provider), choices: await choices(request.actor), errors: {}, notice: noticeOf(request.query), ...extra };
    return sendPage(reply, providerPage(pageContext(request, services), view), extra.status);
  }

  app.get<WithId>('/identity-providers', consoleRoute(), async (request, reply) => {
    const { items, total } = await providers.list(request.actor, LISTED, 0);
    return sendPage(reply, providersListPage(pageContext(request, services), { providers: items, total, notice: noticeOf(request.query) }));
  });

  app.get<WithId>('/identity-providers/new', consoleRoute(), async (request, reply) => {
    providers.assertMayChange(request.actor);
    const kind = kindOf(request.query.kind);
    if (kind === undefined) return sendPage(reply, pickKindPage(pageContext(request, services)));
    return sendPage(reply, newProviderPage(pageContext(request, services), kind, defaultValues(kind), await choices(request.actor), {}));
  });

  app.post('/identity-providers', consoleRoute(), async (request, reply) => {
    providers.assertMayChange(request.actor);
    const form = formOf(request);
    const kind = kindOf(form.get('kind'));
    if (kind === undefined) throw new Unprocessable({ kind: [`must be one of ${PROVIDER_KINDS.join(', ')}`] });
    const { body, typed } = bodyOf(kind, form, true);
    try {
      const provider = await providers.create(request.actor, body);
      return reply.code(303).header('location', see(provider.id, 'created')).send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, newProviderPage(pageContext(request, services), kind, typed, await choices(request.actor), error.messages), 422);
    }
  });

  app.get<WithId>('/identity-providers/:id', consoleRoute(), async (request, reply) => show(request, reply, await providers.get(request.actor, parseId(request.params.id))));

  app.post<WithId>('/identity-providers/:id', consoleRoute(), async (request, reply) => {
    providers.assertMayChange(request.actor);
    const id = parseId(request.params.id);
    const current = await providers.get(request.actor, id);
    const { body, typed } = bodyOf(current.kind, formOf(request), false);
    try {
      await providers.update(request.actor, id, body);
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return show(request, reply, current, { values: { ...typed, enabled: current.enabled }, errors: error.messages, notice: undefined, status: 422 });
    }
    return reply.code(303).header('location', see(id, 'saved')).send();
  });

  for (const [action, enabled] of [['enable', true], ['disable', false]] as const) {
    app.post<WithId>(`/identity-providers/:id/${action}`, consoleRoute(), async (request, reply) => {
      const id = parseId(request.params.id);
      await providers.update(request.actor, id, { enabled });
      return reply.code(303).header('location', see(id, enabled ? 'enabled' : 'disabled')).send();
    });
  }

  app.get<WithId>('/identity-providers/:id/delete', consoleRoute(), async (request, reply) => {
    providers.assertMayChange(request.actor);
    const provider = await providers.get(request.actor, parseId(request.params.id));
    return sendPage(reply, confirmDeleteProviderPage(pageContext(request, services), provider));
  });

  app.post<WithId>('/identity-providers/:id/delete', consoleRoute(), async (request, reply) => {
    await providers.remove(request.actor, parseId(request.params.id));
    return reply.code(303).header('location', '/console/identity-providers?notice=deleted').send();
  });
}
