import type { FastifyInstance } from 'fastify';
import { infrastructureErrorResource as resource } from '../../resources/infrastructure-error.js';
import type { AppContext } from '../context.js';
import { sendPayload } from '../respond.js';
import { parseId } from '../route-params.js';

/** The sysadmin tools (administrators only: domain/infrastructure-errors.ts). */
export function infrastructureErrorsRoutes(app: FastifyInstance, { infrastructureErrors }: AppContext): void {
  const base = '/sysadmin_tools/infrastructure/errors';

  app.get<{ Params: { id: string } }>(`${base}/:id`, async (request, reply) => {
    const record = await infrastructureErrors.find(request.viewer, parseId(request.params.id));
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });

  /** Another component reports an error: 201 for a new fingerprint, 200 when it counted a known one. */
  app.post(base, async (request, reply) => {
    const { record, created } = await infrastructureErrors.report(request.viewer, request.body);
    reply.code(created ? 201 : 200);
    if (created) reply.header('location', `${base}/${record.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });
}
