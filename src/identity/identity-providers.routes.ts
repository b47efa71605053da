import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { type ListSettings, paginationHeaders, parsePagination } from '../shared/pagination.js';
import { servedProvider } from './identity-provider.js';
import { identityProviderResource as resource } from './identity-provider.resource.js';
import type { IdentityProvidersService } from './identity-providers.service.js';

type WithId = { Params: { id: string } };

export const IDENTITY_PROVIDERS = '/sysadmin_tools/identity_providers';
const PROVIDER_BODY = {
  root: 'identity_provider',
  fields: [['kind', 'string'], ['label', 'string'], ['enabled', 'boolean'], ['settings', 'json'], ['mappings', 'json'], ['jit_provisioning', 'boolean']],
} as const;

export const IDENTITY_PROVIDERS_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: IDENTITY_PROVIDERS, summary: 'A page of identity providers (OpenID Connect, SAML, LDAP), their secrets null', who: 'holders of identity_providers.read', formats: true, paginated: true, answers: { 200: { list: resource } } },
  { method: 'POST', path: IDENTITY_PROVIDERS, summary: 'Adds an identity provider', who: 'holders of identity_providers.manage', formats: true, location: true, body: { ...PROVIDER_BODY, required: ['kind', 'label', 'settings'] }, answers: { 201: { record: resource } } },
  { method: 'GET', path: `${IDENTITY_PROVIDERS}/:id`, summary: 'One identity provider, its secrets null', who: 'holders of identity_providers.read', formats: true, answers: { 200: { record: resource } } },
  { method: 'PUT', path: `${IDENTITY_PROVIDERS}/:id`, summary: 'Changes the fields the body names (settings one by one; a secret given again when its server changes)', who: 'holders of identity_providers.manage', formats: true, body: PROVIDER_BODY, answers: { 204: { empty: true } } },
  { method: 'DELETE', path: `${IDENTITY_PROVIDERS}/:id`, summary: 'Removes an identity provider: its accounts stay, unlinked', who: 'holders of identity_providers.manage', formats: true, answers: { 204: { empty: true } } },
];

export interface IdentityProvidersRoutesOptions {
  providers: IdentityProvidersService;
  lists: ListSettings;
}

/** Identity providers (docs/api.md#identity-providers); who may do what: identity/identity-providers.service.ts. */
export const identityProvidersRoutes: FastifyPluginCallback<IdentityProvidersRoutesOptions> = (app, { providers, lists }, done) => {
  app.get(IDENTITY_PROVIDERS, { config: { paginated: true } }, async (request, reply) => {
    const pagination = parsePagination(request.requestPath.pagination, request.query as Record<string, string | string[]>, lists);
    const { items, total } = await providers.list(request.actor, pagination.perPage, pagination.offset);
    reply.headers(paginationHeaders(pagination, total, request.requestPath.listPath));
    return sendPayload(reply, request.format, { kind: 'list', resource, records: items.map(servedProvider) });
  });

  app.post(IDENTITY_PROVIDERS, async (request, reply) => {
    const provider = await providers.create(request.actor, request.body);
    reply.code(201).header('location', `${IDENTITY_PROVIDERS}/${provider.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record: servedProvider(provider) });
  });

  app.get<WithId>(`${IDENTITY_PROVIDERS}/:id`, async (request, reply) => {
    const provider = await providers.get(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record: servedProvider(provider) });
  });

  app.put<WithId>(`${IDENTITY_PROVIDERS}/:id`, async (request, reply) => {
    await providers.update(request.actor, parseId(request.params.id), request.body);
    return reply.code(204).send();
  });

  app.delete<WithId>(`${IDENTITY_PROVIDERS}/:id`, async (request, reply) => {
    await providers.remove(request.actor, parseId(request.params.id));
    return reply.code(204).send();
  });
  done();
};
