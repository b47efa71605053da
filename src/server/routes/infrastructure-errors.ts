import type { FastifyInstance } from 'fastify';
import { NotFound } from '../../domain/errors.js';
import { infrastructureErrorResource as resource } from '../../resources/infrastructure-error.js';
import type { AppContext } from '../context.js';
import { sendPayload } from '../respond.js';
import { parseId, requireAdmin } from '../route-params.js';

/** The sysadmin tools: administrators only. */
export function infrastructureErrorsRoutes(app: FastifyInstance, context: AppContext): void {
  const base = '/sysadmin_tools/infrastructure/errors';

  app.get<{ Params: { id: string } }>(`${base}/:id`, async (request, reply) => {
    requireAdmin(request.viewer);
    const record = await context.infrastructureErrors.find(parseId(request.params.id));
    if (!record) throw new NotFound();
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });

  /** Another component reports an error: 201 for a new fingerprint, 200 when it counted a known one. */
  app.post(base, async (request, reply) => {
    requireAdmin(request.viewer);
    const { record, created } = await context.infrastructureErrors.report(request.body);
    reply.code(created ? 201 : 200);
    if (created) reply.header('location', `${base}/${record.id}.${request.format}`);
    return sendPayload(reply, request.format, { kind: 'record', resource, record });
  });
}
