import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Time-based one-time passwords as every authenticator app speaks them (RFC 6238 over RFC 4226's
 * HOTP): SHA-1, 30-second steps counted from the Unix epoch, 6 digits (docs/security.md#second-factor).
 */
export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the current one, for clocks a little apart. */
export const TOTP_DRIFT_STEPS = 1;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32 without padding (what otpauth URIs carry). */
export function base32Encode(bytes: Buffer): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text.replace(/=+$/, '').toUpperCase()) {
    const index = BASE32.indexOf(char);
    if (index === -1) throw new Error('not base32');
    value = ((value << 5) | index) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

/** A new shared secret: 20 random bytes (160 bits, RFC 4226's recommended length), in base32. */
export const newTotpSecret = (): string => base32Encode(randomBytes(20));

/** RFC 4226 HOTP of `counter` under `key`, `TOTP_DIGITS` long. */
export function hotp(key: Buffer, counter: number): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac('sha1', key).update(message).digest();
  const offset = (digest[digest.length - 1] as number) & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/** The time step of `ms` (milliseconds since the epoch). */
export const totpStep = (ms: number): number => Math.floor(ms / 1000 / TOTP_PERIOD_SECONDS);

/**
 * The step within TOTP_DRIFT_STEPS of `nowMs` whose code `code` is, later than `after` (the last step
 * accepted: a code is accepted once); undefined when none is. Every candidate is compared, in
 * constant time, whichever matches.
 */
export function matchingStep(secret: string, code: string, nowMs: number, after: number | null): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const key = base32Decode(secret);
  const given = Buffer.from(code);
  const current = totpStep(nowMs);
  let found: number | undefined;
  for (let step = current - TOTP_DRIFT_STEPS; step <= current + TOTP_DRIFT_STEPS; step++) {
    const same = timingSafeEqual(Buffer.from(hotp(key, step)), given);
    if (same && (after === null || step > after) && found === undefined) found = step;
  }
  return found;
}

/** The otpauth URI an authenticator app reads (Google Authenticator's Key Uri Format), labelled `cmi:<login>`. */
export function otpauthUri(login: string, secret: string): string {
  const label = `cmi:${encodeURIComponent(login)}`;
  return `otpauth://totp/${label}?secret=${secret}&issuer=cmi&algorithm=SHA1&digits=${TOTP_DIGITS}&period=${TOTP_PERIOD_SECONDS}`;
}

/** How many recovery codes an enrolment makes. */
export const RECOVERY_CODES = 10;

/** A new recovery code: 80 random bits as four groups of four base32 letters and digits, in lower case. */
export function newRecoveryCode(): string {
  return (base32Encode(randomBytes(10)).toLowerCase().match(/.{4}/g) as string[]).join('-');
}

/** A recovery code as typed (any case, with or without its dashes or spaces), as it is compared. */
export const normalisedRecoveryCode = (typed: string): string => typed.toLowerCase().replace(/[\s-]/g, '');

/** What is stored of a recovery code: the SHA-256 of its normalised form (80 random bits need no slow hash). */
export const hashRecoveryCode = (code: string): string => createHash('sha256').update(normalisedRecoveryCode(code)).digest('hex');
