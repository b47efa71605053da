import { createHash, timingSafeEqual } from 'node:crypto';

/** A constant-time check of `Authorization: Bearer <token>` (both sides hashed first, so lengths never differ). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = header !== undefined && header.startsWith('Bearer ') ? header.slice(7) : '';
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}
