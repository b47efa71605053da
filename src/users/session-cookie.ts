import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_COOKIE } from './sessions.js';

/** `Secure` when the request came over TLS (X-Forwarded-Proto counts only with CMI_TRUST_PROXY). */
function cookieAttributes(request: FastifyRequest): string {
  return `path=/; HttpOnly; SameSite=Lax${request.protocol === 'https' ? '; Secure' : ''}`;
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, token: string): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=${token}; ${cookieAttributes(request)}`);
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('set-cookie', `${SESSION_COOKIE}=; Max-Age=0; ${cookieAttributes(request)}`);
}
