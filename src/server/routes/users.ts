import type { FastifyInstance } from 'fastify';
import { presentUser, userResource } from '../../resources/user.js';
import type { AppContext } from '../context.js';
import { parsePagination, setPaginationHeaders } from '../pagination.js';
import { sendPayload } from '../respond.js';

export function usersRoutes(app: FastifyInstance, context: AppContext): void {
  app.get('/users', { config: { paginated: true } }, async (request, reply) => {
    const query = request.query as Record<string, string | string[]>;
    const pagination = parsePagination(request.requestPath.pagination, query, context.config);
    const { items, total } = await context.users.list(request.viewer, pagination.perPage, pagination.offset);
    setPaginationHeaders(reply, pagination, total, request.requestPath.listPath);
    return sendPayload(reply, request.format, { kind: 'list', resource: userResource, records: items.map((user) => presentUser(user)) });
  });
}
