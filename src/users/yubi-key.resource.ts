import type { ResourceDefinition } from '../http/render/resource-definition.js';

/**
 * One of a user's YubiKeys with the fields of OnApp's PHP wrapper (User/YubiKey.php): `otp` is the
 * key's public id (the first 12 modhex characters of its OTPs), `last_used` always null (cmi never
 * accepts a YubiKey OTP: docs/security.md#yubikeys).
 */
export const yubiKeyResource = {
  root: 'yubi_key',
  plural: 'yubi_keys',
  fields: [
    ['id', 'integer'],
    ['created_at', 'datetime'],
    ['updated_at', 'datetime'],
    ['user_id', 'integer'],
    ['label', 'string'],
    ['last_used', 'string', 'nullable'],
    ['otp', 'string'],
  ],
} as const satisfies ResourceDefinition;
