import { timingSafeEqual } from 'node:crypto';

export const MISSING_KEY = 'Missing authentication: send the ingest key\'s public key (the DSN\'s) in X-Sentry-Auth or sentry_key';
export const INVALID_KEY = 'Invalid ingest key for this project';
export const DISABLED_KEY = 'The ingest key is disabled';

/** `sentry_key` of `X-Sentry-Auth: Sentry sentry_key=..., sentry_version=7, ...`. */
export function keyFromAuthHeader(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const body = header.replace(/^\s*sentry\s+/i, '');
  for (const part of body.split(',')) {
    const equals = part.indexOf('=');
    if (equals !== -1 && part.slice(0, equals).trim() === 'sentry_key') return part.slice(equals + 1).trim();
  }
  return undefined;
}

/** The key and project of a DSN (`https://<key>@host/<project>`), as an envelope's header carries it. */
export function keyFromDsn(dsn: unknown): { key: string; project: string } | undefined {
  if (typeof dsn !== 'string') return undefined;
  try {
    const url = new URL(dsn);
    const project = url.pathname.split('/').filter(Boolean).at(-1);
    if (url.username === '' || project === undefined) return undefined;
    return { key: decodeURIComponent(url.username), project };
  } catch {
    return undefined;
  }
}

/** Whether `given` is `expected`, in constant time (lengths aside). */
export function sameKey(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
