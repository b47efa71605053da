import { randomBytes } from 'node:crypto';
import { Algorithm, hash, verify } from '@node-rs/argon2';
import { userLimits } from '../shared/limits.js';

/** argon2id with OWASP's minimum: 19 MiB memory, 2 passes, 1 lane. */
const ARGON2ID = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** A new random password (144 bits, 24 URL-safe characters), for an operator to be shown once. */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2ID);
}

let decoyHash: Promise<string> | undefined;

/**
 * Verifies `password` against `storedHash`. Without a stored hash (unknown login) it verifies against a
 * decoy of the same cost, so a missing login takes as long to refuse as a wrong password.
 */
export async function verifyPassword(storedHash: string | undefined, password: string): Promise<boolean> {
  // Longer passwords are refused before any hashing.
  if (Buffer.byteLength(password) > userLimits.passwordMaxBytes) return false;
  // No account, or one without a cmi password (made by an identity provider): the same time spent.
  if (storedHash === undefined || storedHash === '') {
    decoyHash ??= hashPassword('decoy password that never matches');
    await verify(await decoyHash, password).catch(() => false);
    return false;
  }
  return verify(storedHash, password).catch(() => false);
}
