import type { FastifyInstance } from 'fastify';
import { assertPermitted } from '../roles/authorization.js';
import { Unprocessable } from '../shared/problems.js';
import { consoleRoute, type ConsoleServices, formOf, pageContext, sendPage } from './console-page.js';
import { passwordPolicyPage, POLICY_FLAGS, POLICY_NUMBERS, policyValues } from './password-policy-pages.js';

/** The password policy's page (docs/console.md#password-policy): shown and changed by users/password-policy.service.ts's rules. */
export function consolePasswordPolicyRoutes(app: FastifyInstance, services: ConsoleServices): void {
  const { passwordPolicy } = services;
  if (!passwordPolicy) return;

  app.get<{ Querystring: { notice?: string } }>('/settings/password-policy', consoleRoute(), async (request, reply) => {
    const policy = await passwordPolicy.show(request.actor);
    return sendPage(reply, passwordPolicyPage(pageContext(request, services), policyValues(policy), {}, request.query.notice === 'saved' ? 'Saved.' : undefined));
  });

  app.post('/settings/password-policy', consoleRoute(), async (request, reply) => {
    assertPermitted(request.actor, 'password_policy.manage');
    const form = formOf(request);
    // As the API reads it; an unticked box is false.
    const body: Record<string, string | boolean> = {};
    for (const [name] of POLICY_NUMBERS) body[name] = form.get(name) ?? '';
    for (const [name] of POLICY_FLAGS) body[name] = form.get(name) === 'true';
    try {
      await passwordPolicy.update(request.actor, body);
      return reply.code(303).header('location', '/console/settings/password-policy?notice=saved').send();
    } catch (error) {
      if (!(error instanceof Unprocessable)) throw error;
      return sendPage(reply, passwordPolicyPage(pageContext(request, services), body, error.messages), 422);
    }
  });
}
