import type { FastifyPluginCallback } from 'fastify';
import type { RouteSpec } from '../http/route-spec.js';
import { sendPayload } from '../http/respond.js';
import { parseId } from '../http/route-params.js';
import { twoFactorEnrolmentResource, twoFactorResource } from './two-factor.resource.js';
import { OTP_HEADER, type TwoFactorService } from './two-factor.service.js';

type WithUser = { Params: { id: string } };

export const TWO_FACTOR_ROUTES: readonly RouteSpec[] = [
  { method: 'GET', path: '/users/:id/two_factor', summary: 'Whether the user has a second factor (never its secret)', who: 'holders of users.read; a user for itself', formats: true, answers: { 200: { record: twoFactorResource } } },
  { method: 'POST', path: '/users/:id/two_factor', summary: 'Enrols the caller\'s own TOTP second factor (only the user itself), pending until confirmed: its secret, otpauth URI and 10 recovery codes shown this once', who: 'any user', formats: true, answers: { 201: { record: twoFactorEnrolmentResource } } },
  {
    method: 'PUT', path: '/users/:id/two_factor', summary: 'Confirms the caller\'s own pending second factor (only the user itself) with a current code (a wrong one counts toward the lockout)', who: 'any user', formats: true,
    body: { root: 'two_factor', fields: [['code', 'string']], required: ['code'] },
    answers: { 200: { record: twoFactorResource } },
  },
  { method: 'DELETE', path: '/users/:id/two_factor', summary: 'Removes the second factor: the user itself with a current code or a recovery code in X-Cmi-OTP, or a holder of users.update for another user', who: 'holders of users.update; a user for itself (with X-Cmi-OTP)', formats: true, answers: { 204: { empty: true } } },
];

export interface TwoFactorRoutesOptions {
  twoFactor: TwoFactorService;
}

/** A user's second factor (docs/api.md#second-factor); who may: users/two-factor.service.ts. */
export const twoFactorRoutes: FastifyPluginCallback<TwoFactorRoutesOptions> = (app, { twoFactor }, done) => {
  app.get<WithUser>('/users/:id/two_factor', async (request, reply) => {
    const status = await twoFactor.status(request.actor, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource: twoFactorResource, record: status });
  });

  app.post<WithUser>('/users/:id/two_factor', async (request, reply) => {
    const enrolment = await twoFactor.enrol(request.actor, parseId(request.params.id), request.body);
    reply.code(201).header('cache-control', 'no-store');
    return sendPayload(reply, request.format, { kind: 'record', resource: twoFactorEnrolmentResource, record: enrolment });
  });

  app.put<WithUser>('/users/:id/two_factor', async (request, reply) => {
    const status = await twoFactor.confirm(request.actor, parseId(request.params.id), request.body);
    return sendPayload(reply, request.format, { kind: 'record', resource: twoFactorResource, record: status });
  });

  app.delete<WithUser>('/users/:id/two_factor', async (request, reply) => {
    const otp = request.headers[OTP_HEADER];
    await twoFactor.disable(request.actor, parseId(request.params.id), Array.isArray(otp) ? otp[0] : otp);
    return reply.code(204).send();
  });
  done();
};
