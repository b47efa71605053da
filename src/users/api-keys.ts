import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A new API key: 32 random bytes as 64 hex characters. Shown once; only its SHA-256 is stored. */
export function newApiKey(): { key: string; hash: string } {
  const key = randomBytes(32).toString('hex');
  return { key, hash: hashApiKey(key) };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Compares a presented key with a stored hash in constant time (the key is hashed even when there is no hash). */
export function apiKeyMatches(presented: string, storedHash: string | null): boolean {
  const actual = createHash('sha256').update(presented).digest();
  if (storedHash === null) return false;
  const expected = Buffer.from(storedHash, 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
