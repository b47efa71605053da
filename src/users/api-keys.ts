import { createHash, randomBytes } from 'node:crypto';

/** A new API key: 32 random bytes as 64 hex characters. Shown once; only its SHA-256 is stored. */
export function newApiKey(): { key: string; hash: string } {
  const key = randomBytes(32).toString('hex');
  return { key, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
