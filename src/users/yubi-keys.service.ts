import type { AuditRecorder } from '../audit/audit-trail.js';
import type { Clock } from '../shared/clock.js';
import { type Actor, may } from '../roles/authorization.js';
import { FieldErrors, Forbidden, NotFound, Unprocessable } from '../shared/problems.js';
import type { Page } from '../shared/page.js';
import { stringField, unwrapRecord } from '../shared/request-body.js';
import type { YubiKey, YubiKeysRepository } from './yubi-keys.store.js';
import type { UsersRepository } from './users.store.js';

/** Yubico's modhex alphabet, in which a YubiKey types its OTPs. */
const MODHEX = /^[cbdefghijklnrtuv]+$/;
/** An OTP: the key's 12-character public id, then 32 characters of the encrypted token. */
const KEY_ID_LENGTH = 12;
const OTP_LENGTH = KEY_ID_LENGTH + 32;

/** Most keys a user records. */
export const MAX_YUBI_KEYS_PER_USER = 10;

/** Whether `code` is what a YubiKey types (an OTP of 44 modhex characters), not a TOTP or recovery code. */
export const isYubiKeyOtp = (code: string): boolean => code.length === OTP_LENGTH && MODHEX.test(code);

/** Why a YubiKey OTP is refused wherever a code is asked (docs/security.md#yubikeys). */
export const YUBIKEY_REFUSAL = 'YubiKey one-time passwords are not accepted: cmi cannot reach Yubico\'s validation servers. Give the code of the authenticator app, or a recovery code';

/**
 * OnApp's YubiKeys (`/users/:id/yubi_keys`, as the PHP wrapper's User/YubiKey.php calls them): cmi
 * records which keys a user has (each key's public id, from an OTP given when it is added), lists and
 * forgets them, and never accepts a YubiKey OTP as a factor (docs/security.md#yubikeys). The user
 * itself manages its own; holders of users.read see, of users.update manage, everyone's.
 */
export function yubiKeysService(repository: YubiKeysRepository, users: UsersRepository, clock: Clock, audit: AuditRecorder, credentialsChanged: (userId: number) => void) {
  function assertMay(actor: Actor, userId: number, permission: 'users.read' | 'users.update'): void {
    if (actor.id !== userId && !may(actor, permission)) throw Forbidden.needs(permission);
  }
  async function userExists(userId: number): Promise<void> {
    if (!(await users.findById(userId))) throw new NotFound();
  }
  const record = (actor: Actor, action: string, userId: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'user', target_id: userId, changes });

  return {
    async list(actor: Actor, userId: number, limit: number, offset: number): Promise<Page<YubiKey>> {
      assertMay(actor, userId, 'users.read');
      await userExists(userId);
      const [items, total] = await Promise.all([repository.page(userId, limit, offset), repository.count(userId)]);
      return { items, total };
    },

    async get(actor: Actor, userId: number, id: number): Promise<YubiKey> {
      assertMay(actor, userId, 'users.read');
      const key = await repository.find(userId, id);
      if (!key) throw new NotFound();
      return key;
    },

    /** `{"yubi_key": {"label": ..., "otp": <an OTP the key typed>}}`: the key's public id is kept, the rest of the OTP is not. */
    async create(actor: Actor, userId: number, body: unknown): Promise<YubiKey> {
      assertMay(actor, userId, 'users.update');
      const fields = unwrapRecord(body ?? {}, 'yubi_key');
      const errors = new FieldErrors();
      const label = stringField(fields, 'label', errors, { required: false, max: 255 });
      const otp = stringField(fields, 'otp', errors, { required: true, max: 64 })?.trim().toLowerCase();
      if (otp !== undefined && !isYubiKeyOtp(otp)) errors.add('otp', `must be a YubiKey OTP: ${OTP_LENGTH} modhex characters (touch the key)`);
      errors.throwIfAny();
      const keyId = (otp as string).slice(0, KEY_ID_LENGTH);
      const created = await repository.create(userId, label ?? '', keyId, MAX_YUBI_KEYS_PER_USER, clock());
      if (created === undefined) throw new NotFound();
      if (created === 'duplicate') throw new Unprocessable({ otp: ['is of a key the user has already'] });
      if (created === 'limit') throw new Unprocessable({ base: [`A user has at most ${MAX_YUBI_KEYS_PER_USER} YubiKeys: remove one first`] });
      credentialsChanged(userId);
      await record(actor, 'user.yubi_key.create', userId, { yubi_key_id: created.id, label: created.label, key_id: keyId });
      return created;
    },

    async remove(actor: Actor, userId: number, id: number): Promise<void> {
      assertMay(actor, userId, 'users.update');
      if (!(await repository.remove(userId, id, clock()))) throw new NotFound();
      credentialsChanged(userId);
      await record(actor, 'user.yubi_key.delete', userId, { yubi_key_id: id });
    },
  };
}

export type YubiKeysService = ReturnType<typeof yubiKeysService>;
