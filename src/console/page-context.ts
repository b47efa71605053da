import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../app/context.js';
import type { PageContext } from './layout.js';

/** Who is looking and the CSRF token of their session, for a page of a signed-in user. */
export function pageContext(request: FastifyRequest, { sessionTokens, clock }: AppContext): PageContext {
  if (!request.session) throw new Error('a console page rendered without a session (routes/console/console-plugin.ts signs every one in)');
  return { viewer: request.viewer, csrf: sessionTokens.csrfToken(request.session), now: clock() };
}
