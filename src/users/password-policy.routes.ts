import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import type { PasswordPolicyService } from './password-policy.service.js';
import { passwordPolicyResource } from './password-policy.resource.js';

const WHO = 'holders of password_policy.manage';

export const PASSWORD_POLICY_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/settings/password_policy', summary: 'The password policy every new password is held to', who: WHO, formats: true, answers: { 200: { record: passwordPolicyResource } } },
  {
    method: 'PUT', path: '/settings/password_policy', summary: 'Changes any of the password policy\'s fields (each bad one named in one 422), in every process within a second', who: WHO, formats: true,
    body: {
      root: 'password_policy',
      fields: [['min_length', 'integer'], ['require_upper', 'boolean'], ['require_lower', 'boolean'], ['require_digit', 'boolean'], ['require_symbol', 'boolean'],
        ['history', 'integer'], ['expiry_months', 'integer'], ['lockout_attempts', 'integer'], ['lockout_minutes', 'integer']],
    },
    answers: { 200: { record: passwordPolicyResource } },
  },
];

/** `/settings/password_policy`; who may: users/password-policy.service.ts. The policy is read again every second while the app runs. */
export const passwordPolicyRoutes: FastifyPluginCallback<{ policy: PasswordPolicyService }> = (app, { policy }, done) => {
  policy.startRefreshing();
  app.addHook('onClose', (_instance, closed) => {
    policy.stopRefreshing();
    closed();
  });

  app.get('/settings/password_policy', async (request, reply) =>
    sendPayload(reply, request.format, { kind: 'record', resource: passwordPolicyResource, record: await policy.show(request.actor) }));

  app.put('/settings/password_policy', async (request, reply) =>
    sendPayload(reply, request.format, { kind: 'record', resource: passwordPolicyResource, record: await policy.update(request.actor, request.body) }));
  done();
};
