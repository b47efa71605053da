import type { AuditRecorder } from '../audit/audit-trail.js';
import { difference, REDACTED } from '../audit/audit-event.js';
import { newApiKey } from './api-keys.js';
import type { Clock } from '../shared/clock.js';
import { type Actor, assertPermitted, assertPermittedOnUser, may } from '../roles/authorization.js';
import { ADMIN_ROLE_ID, USER_ROLE_ID } from '../roles/permissions.js';
import { FieldErrors, Forbidden, FORBIDDEN_MESSAGE, NotFound, Unprocessable } from '../shared/problems.js';
import { apiKeyLimits, userLimits } from '../shared/limits.js';
import { accountName, type Lockout } from './lockout.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { Page } from '../shared/page.js';
import type { Role, User } from './user.js';
import { idListField, stringField, unwrapRecord } from '../shared/request-body.js';
import { DuplicateValue, type ChangeOutcome, type UserChanges, type UserFilters, type UsersRepository } from './users.store.js';
import type { UserApiKey, UserApiKeysRepository } from './user-api-keys.store.js';
import type { PasswordRules } from './password-policy.service.js';


export const LOGIN = /^[A-Za-z0-9_.][A-Za-z0-9_@.-]*$/;
// Deliberately plain: one @ and no spaces (local domains such as admin@localhost are fine).
export const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * Reads the user fields present in `fields`, naming every bad one (a login or email another user has
 * included) in a single 422. With `required`, login, email and password must be there (a new user).
 * `check`, if given, adds its own errors to the same 422 (it runs last). `passwordRules` names every
 * rule of the password policy a new password breaks (docs/security.md#password-policy); without it,
 * the house's minimum length alone.
 */
async function readUserFields(
  fields: Record<string, unknown>,
  required: boolean,
  taken: (values: { login?: string; email?: string }) => Promise<Array<'login' | 'email'>>,
  unknownRoles: (ids: number[]) => Promise<number[]>,
  bucketExists: (id: number) => Promise<boolean>,
  groupExists: (id: number) => Promise<boolean>,
  check?: (errors: FieldErrors) => Promise<void>,
  passwordRules?: PasswordRules,
): Promise<ReadFields> {
  const errors = new FieldErrors();
  const out: ReadFields = {};
  const text = (name: string, max: number, isRequired = false) => stringField(fields, name, errors, { required: isRequired, max });

  const login = text('login', userLimits.loginMax, required);
  if (login !== undefined && (login.length < userLimits.loginMin || !LOGIN.test(login))) {
    errors.add('login', `must be ${userLimits.loginMin}-${userLimits.loginMax} characters of letters, digits and _ @ . -, not starting with - or @`);
  } else if (login !== undefined) out.login = login;

  // Checked again as it is stored, in lower case, which can be longer (U+0130 becomes two code
  // points): PostgreSQL would refuse the over-long value with an error, SQLite would store it.
  const email = text('email', userLimits.email, required)?.toLowerCase();
  if (email !== undefined && !EMAIL.test(email)) errors.add('email', 'is invalid');
  else if (email !== undefined && email.length > userLimits.email) errors.add('email', `is too long (maximum is ${userLimits.email} characters)`);
  else if (email !== undefined) out.email = email;

  for (const field of await taken({ login: out.login, email: out.email })) errors.add(field, 'has already been taken');

  // Measured in bytes below; the character limit here only has to let every candidate through.
  const password = text('password', Number.MAX_SAFE_INTEGER, required);
  if (password !== undefined) {
    const broken = Buffer.byteLength(password) > userLimits.passwordMaxBytes ? [`is too long (maximum is ${userLimits.passwordMaxBytes} bytes)`]
      : passwordRules ? await passwordRules.broken(password)
        : [...password].length < userLimits.passwordMinChars ? [`is too short (minimum is ${userLimits.passwordMinChars} characters)`] : [];
    for (const message of broken) errors.add('password', message);
    if (broken.length === 0) out.password = password;
  }

  for (const name of ['first_name', 'last_name'] as const) {
    const value = text(name, userLimits.name);
    if (value !== undefined) out[name] = value;
  }
  for (const [name, max] of [['time_zone', userLimits.timeZone], ['locale', userLimits.locale]] as const) {
    if (fields[name] === null) out[name] = null;
    else {
      const value = text(name, max);
      if (value !== undefined) out[name] = value === '' ? null : value;
    }
  }
  const role = text('role', 16);
  if (role !== undefined && role !== 'admin' && role !== 'user') errors.add('role', 'must be admin or user');
  else if (role !== undefined) out.role = role;
  const roleIds = idListField(fields, 'role_ids', errors);
  if (roleIds !== undefined && roleIds.length === 0) errors.add('role_ids', 'must name at least one role');
  else if (roleIds !== undefined) {
    const unknown = await unknownRoles(roleIds);
    if (unknown.length > 0) errors.add('role_ids', `names no role: ${unknown.join(', ')}`);
    else out.role_ids = [...new Set(roleIds)];
  }
  const bucket = fields['bucket_id'];
  if (bucket === null || bucket === '') out.bucket_id = null;
  else if (bucket !== undefined) {
    const id = typeof bucket === 'number' ? bucket : typeof bucket === 'string' && /^[1-9]\d{0,14}$/.test(bucket) ? Number(bucket) : NaN;
    if (!Number.isSafeInteger(id) || id < 1) errors.add('bucket_id', 'must be an id or null');
    else if (!(await bucketExists(id))) errors.add('bucket_id', `names no bucket: ${id}`);
    else out.bucket_id = id;
  }
  const group = fields['user_group_id'];
  if (group === null || group === '') out.user_group_id = null;
  else if (group !== undefined) {
    const id = typeof group === 'number' ? group : typeof group === 'string' && /^[1-9]\d{0,14}$/.test(group) ? Number(group) : NaN;
    if (!Number.isSafeInteger(id) || id < 1) errors.add('user_group_id', 'must be an id or null');
    else if (!(await groupExists(id))) errors.add('user_group_id', `names no user group: ${id}`);
    else out.user_group_id = id;
  }

  await check?.(errors);
  errors.throwIfAny();
  return out;
}

/** The fields read from a body: the user's, its password, and the roles as `role` and `role_ids` give them. */
type ReadFields = Omit<UserChanges, 'role_ids'> & { password?: string; role?: Role; role_ids?: number[] };

/**
 * The role ids `role_ids` and `role` come to (docs/api.md#users): `role_ids` replace `current`;
 * `role` then swaps the system role within them (admin for user or back), so it keeps any other role.
 * Undefined when neither is given.
 */
function requestedRoleIds(fields: ReadFields, current: readonly number[]): number[] | undefined {
  if (fields.role_ids === undefined && fields.role === undefined) return undefined;
  const ids = new Set(fields.role_ids ?? current);
  if (fields.role !== undefined) {
    ids.delete(fields.role === 'admin' ? USER_ROLE_ID : ADMIN_ROLE_ID);
    ids.add(fields.role === 'admin' ? ADMIN_ROLE_ID : USER_ROLE_ID);
  }
  return [...ids].sort((a, b) => a - b);
}

const sameIds = (a: readonly number[], b: readonly number[]) => a.length === b.length && [...a].sort().every((id, i) => id === [...b].sort()[i]);

/**
 * What a new user is given beyond the defaults (the role `user` alone, no bucket, no group) needs what
 * changing it later needs, users.update (docs/security.md#authorisation-by-permission): else 403 naming
 * it, and nothing is created. The defaults sent as such (`role: "user"`, `role_ids: [2]`, a null
 * bucket or group) are no change and pass, as unchanged ones do on an update.
 */
function assertDefaultsWithoutUpdate(actor: Actor, fields: ReadFields): void {
  if (may(actor, 'users.update')) return;
  const roleIds = requestedRoleIds(fields, [USER_ROLE_ID]);
  const beyond = (roleIds !== undefined && !sameIds(roleIds, [USER_ROLE_ID])) || (fields.bucket_id ?? null) !== null || (fields.user_group_id ?? null) !== null;
  if (beyond) throw Forbidden.needs('users.update');
}

/**
 * A key acts as its user, so making one for a user who holds a permission the actor lacks is refused
 * (403 naming what it lacks: docs/security.md#api-keys): users.api_key makes keys only for users no
 * stronger than the actor, never an administrator's unless the actor holds every permission too. A
 * user's `<action>.own` is held as it or as the plain `<action>` (which acts on every user).
 */
function assertHoldsAllOf(actor: Actor, user: User): void {
  const holds = (permission: string) => actor.permissions.has(permission) || (permission.endsWith('.own') && actor.permissions.has(permission.slice(0, -'.own'.length)));
  const lacking = [...user.permissions].filter((permission) => !holds(permission)).sort();
  if (lacking.length > 0) throw new Forbidden(`${FORBIDDEN_MESSAGE} (needs ${lacking.join(', ')}: a key for user ${user.id} acts with its permissions)`);
}

const LAST_ADMIN = 'The last active administrator cannot be deleted, suspended or made a user';

function changedUser(change: ChangeOutcome): User {
  if (change.outcome !== 'changed') throw change.outcome === 'not_found' ? new NotFound() : new Unprocessable({ base: [LAST_ADMIN] });
  return change.user;
}

/** The fields whose change can take an account: through a session they need the current password. */
const CREDENTIAL_FIELDS = ['login', 'email', 'password'] as const;
const present = (fields: Record<string, unknown>, name: string) => fields[name] !== undefined && fields[name] !== null;

/**
 * Whether a change needs the actor's `current_password` (docs/security.md#self-service): a user's own
 * new password always (a stolen cookie or API key alone cannot take the account); through a session
 * cookie, any new login, email or password, whoever's, administrators' too. The operator never.
 */
function needsCurrentPassword(actor: Actor, fields: Record<string, unknown>): boolean {
  if (actor.id === null) return false;
  if (actor.viaSession) return CREDENTIAL_FIELDS.some((name) => present(fields, name));
  return !may(actor, 'users.update') && present(fields, 'password');
}

/** How recent a sign-in through an identity provider stands for the password its account does not have, in seconds. */
export const RECENT_SIGN_IN_SECONDS = 300;

/**
 * Checks `current_password` against the actor's own password hash, only when every other field is
 * valid (no hash is computed for a request that fails anyway).
 */
function currentPasswordCheck(
  fields: Record<string, unknown>,
  passwordHash: () => Promise<string | undefined>,
  countGuess: () => Promise<() => Promise<void>>,
  actor: Actor,
  now: () => Date,
) {
  return async (errors: FieldErrors): Promise<void> => {
    // An account an identity provider made has no cmi password to prove: a sign-in through its
    // provider in the last five minutes stands for it, so a stolen session alone cannot make itself
    // an API key or a new login (docs/security.md#identity-providers).
    const hash = await passwordHash();
    if (hash === '') {
      const recent = actor.signedInAt !== undefined && now().getTime() / 1000 - actor.signedInAt <= RECENT_SIGN_IN_SECONDS;
      if (!recent) errors.add('current_password', 'cannot be given: this account has no cmi password. Sign in again through its identity provider, then do this within 5 minutes');
      return;
    }
    const current = stringField(fields, 'current_password', errors, { required: true, max: Number.MAX_SAFE_INTEGER });
    if (current === undefined || !errors.empty) return;
    // Counted like a login before it is checked, so a stolen session cannot guess the password freely.
    const succeeded = await countGuess();
    if (hash === undefined || !(await verifyPassword(hash, current))) errors.add('current_password', 'is incorrect');
    else await succeeded();
  };
}

/** The password policy's history rule for user `userId`'s new password, only when every other field is valid. */
function passwordHistoryCheck(rules: PasswordRules, password: string, userId: number, currentHash: () => Promise<string | undefined>) {
  return async (errors: FieldErrors): Promise<void> => {
    if (!errors.empty) return;
    for (const message of await rules.broken(password, { userId, currentHash })) errors.add('password', message);
  };
}

function duplicateAsUnprocessable(error: unknown): never {
  if (error instanceof DuplicateValue) throw new Unprocessable({ [error.field]: ['has already been taken'] });
  throw error;
}

/**
 * The account rules, and who may apply them. Request bodies arrive as sent (`{"user": {...}}` or the
 * bare fields). `credentialsChanged(id)` runs after every change to a user, so its cached
 * verifications go at once.
 */
export function usersService(
  repository: UsersRepository,
  clock: Clock,
  audit: AuditRecorder,
  credentialsChanged: (userId: number) => void = () => {},
  guesses?: Lockout,
  apiKeys?: UserApiKeysRepository,
  passwordRules?: PasswordRules,
) {
  /** Counts a proof of `user`'s password from `address` on the lockout's counters; gives what to call if it was right. */
  /**
   * Through a session, `current_password` in the body (under `root`, or bare) must be the actor's own
   * (docs/security.md#self-service): 422 otherwise, counted like a login. Nothing for other credentials.
   */
  async function requireCurrentPassword(actor: Actor, body: unknown, root: string): Promise<void> {
    if (!actor.viaSession || actor.id === null) return;
    const errors = new FieldErrors();
    await currentPasswordCheck(unwrapRecord(body ?? {}, root), () => repository.passwordHash(actor.id as number), () => countGuess(actor.id as number, actor.address), actor, clock)(errors);
    errors.throwIfAny();
  }

  async function countGuess(userId: number, address: string | undefined): Promise<() => Promise<void>> {
    const user = await repository.findById(userId);
    if (guesses === undefined || address === undefined || user === undefined) return () => Promise.resolve();
    const charged = await guesses.charge({ name: accountName(user.login), address, userId });
    return () => guesses.succeeded(charged);
  }


  const unknownRoles = (ids: number[]) => repository.unknownRoleIds(ids);
  const bucketExists = (id: number) => repository.bucketExists(id);
  const groupExists = (id: number) => repository.userGroupExists(id);

  /** What `actor` may list of the users `filters` keep: everyone with users.read, only itself with users.read.own. */
  async function list(actor: Actor, limit: number, offset: number, filters: UserFilters): Promise<Page<User>> {
    if (!may(actor, 'users.read') && !may(actor, 'users.read.own')) throw Forbidden.needs('users.read', 'users.read.own');
    const scoped = may(actor, 'users.read') ? filters : { ...filters, only_id: actor.id ?? -1 };
    const total = await repository.count(scoped);
    const items = offset >= total ? [] : await repository.page(limit, offset, scoped);
    return { items, total };
  }

  /**
   * The keys' store, once the actor may manage the user's keys and the user exists; `making` a key, once
   * the user holds no permission the actor lacks (assertHoldsAllOf).
   */
  async function keysOf(actor: Actor, userId: number, making = false): Promise<UserApiKeysRepository> {
    assertPermittedOnUser(actor, 'users.api_key', userId);
    if (!apiKeys) throw new Error('usersService: no API keys repository');
    const user = await repository.findById(userId);
    if (!user) throw new NotFound();
    if (making) assertHoldsAllOf(actor, user);
    return apiKeys;
  }

  /** A user as the audit trail compares it: its own fields, its roles' ids (docs/security.md#what-is-audited). */
  const audited = (user: User) => ({
    login: user.login, email: user.email, first_name: user.first_name, last_name: user.last_name, status: user.status,
    time_zone: user.time_zone, locale: user.locale, bucket_id: user.bucket_id, user_group_id: user.user_group_id,
    role_ids: user.roles.map((role) => role.id),
  });
  const recordUser = (actor: Actor, action: string, id: number, changes: Record<string, unknown>) =>
    audit.record(actor, { action, target_type: 'user', target_id: id, changes });

  async function find(actor: Actor, id: number): Promise<User> {
    assertPermittedOnUser(actor, 'users.read', id);
    const user = await repository.findById(id);
    if (!user) throw new NotFound();
    return user;
  }

  return {
    requireCurrentPassword,

    async create(actor: Actor, body: unknown): Promise<User> {
      assertPermitted(actor, 'users.create');
      const { password, ...changes } = await readUserFields(unwrapRecord(body, 'user'), true, (values) => repository.takenFields(values), unknownRoles, bucketExists, groupExists, undefined, passwordRules);
      assertDefaultsWithoutUpdate(actor, changes);
      const user = await repository
        .create(
          {
            login: changes.login as string,
            email: changes.email as string,
            password_hash: await hashPassword(password as string),
            first_name: changes.first_name ?? '',
            last_name: changes.last_name ?? '',
            role_ids: requestedRoleIds(changes, [USER_ROLE_ID]) ?? [USER_ROLE_ID],
            bucket_id: changes.bucket_id ?? null,
            user_group_id: changes.user_group_id ?? null,
            time_zone: changes.time_zone ?? null,
            locale: changes.locale ?? null,
          },
          clock(),
        )
        .catch(duplicateAsUnprocessable);
      await recordUser(actor, 'user.create', user.id, { ...audited(user), password: REDACTED });
      return user;
    },

    /** What `actor` may list of the users `filters` keep (docs/api.md#users-list-filters). */
    list: (actor: Actor, limit: number, offset: number, filters: UserFilters = {}) => list(actor, limit, offset, filters),

    /**
     * The members of user group `groupId`, as the users list shows them (docs/api.md#user-groups): the
     * group must exist and be visible to the actor (user_groups.read), else 403 or 404.
     */
    async groupMembers(actor: Actor, groupId: number, limit: number, offset: number, filters: UserFilters = {}): Promise<Page<User>> {
      assertPermitted(actor, 'user_groups.read');
      if (!(await groupExists(groupId))) throw new NotFound();
      return list(actor, limit, offset, { ...filters, user_group_id: groupId });
    },

    get: find,

    /** A user by id, or by login or email in any case (the operator's command line names users all three ways). */
    async lookUp(actor: Actor, idLoginOrEmail: string): Promise<User> {
      assertPermitted(actor, 'users.read');
      if (!/^\d+$/.test(idLoginOrEmail)) {
        // In any case, and never a guess between two accounts (docs/security.md#one-name-one-account).
        const found = await repository.findAllByLoginOrEmail(idLoginOrEmail);
        if (found.length > 1) {
          throw new Unprocessable({ base: [`${JSON.stringify(idLoginOrEmail)} names more than one user (ids ${found.map((u) => u.id).join(', ')}): give the id`] });
        }
        if (found[0]) return found[0];
        throw new Unprocessable({ base: [`no user with id, login or email ${JSON.stringify(idLoginOrEmail)}`] });
      }
      const user = await repository.findById(Number(idLoginOrEmail));
      if (!user) throw new Unprocessable({ base: [`no user with id, login or email ${JSON.stringify(idLoginOrEmail)}`] });
      return user;
    },

    /**
     * Any field a user may hold; only a holder of users.update changes roles, but anyone may send its
     * unchanged `role_ids` again (the PHP wrapper does on every save). A user's own new password, and
     * through a session any new login, email or password, needs `current_password` (needsCurrentPassword).
     */
    async update(actor: Actor, id: number, body: unknown): Promise<User> {
      assertPermittedOnUser(actor, 'users.update', id);
      const fields = unwrapRecord(body ?? {}, 'user');
      // Who signs in through an identity provider keeps to it: only an administrator gives it a cmi password.
      if (present(fields, 'password') && !may(actor, 'users.update') && (await repository.passwordHash(id)) === '') {
        throw new Unprocessable({ password: ["can't be set by the account itself: it signs in through its identity provider (an administrator can give it a cmi password)"] });
      }
      const currentCheck = needsCurrentPassword(actor, fields)
        ? currentPasswordCheck(fields, () => repository.passwordHash(actor.id as number), () => countGuess(actor.id as number, actor.address), actor, clock)
        : undefined;
      // The policy's history last, once all else holds: it costs an argon2id verify an earlier password.
      const historyCheck = passwordRules && typeof fields['password'] === 'string' ? passwordHistoryCheck(passwordRules, fields['password'], id, () => repository.passwordHash(id)) : undefined;
      const check = currentCheck && historyCheck ? async (errors: FieldErrors) => { await currentCheck(errors); await historyCheck(errors); } : currentCheck ?? historyCheck;
      const { password, role, role_ids, ...changes } = await readUserFields(fields, false, (values) => repository.takenFields(values, id), unknownRoles, bucketExists, groupExists, check, passwordRules);
      if (role !== undefined && !may(actor, 'users.update')) throw Forbidden.needs('users.update');
      // Like roles: a holder of users.update moves a user between buckets; anyone may send its own unchanged.
      if (changes.bucket_id !== undefined && !may(actor, 'users.update')) {
        const current = await repository.findById(id);
        if (current === undefined) throw new NotFound();
        if (current.bucket_id !== changes.bucket_id) throw Forbidden.needs('users.update');
        delete changes.bucket_id;
      }
      // The same for groups: a group's roles apply to its members (docs/security.md#user-groups).
      if (changes.user_group_id !== undefined && !may(actor, 'users.update')) {
        const current = await repository.findById(id);
        if (current === undefined) throw new NotFound();
        if (current.user_group_id !== changes.user_group_id) throw Forbidden.needs('users.update');
        delete changes.user_group_id;
      }
      let roleIds: number[] | undefined;
      if (role !== undefined || role_ids !== undefined) {
        const current = (await repository.findById(id))?.roles.map((held) => held.id);
        if (current === undefined) throw new NotFound();
        const requested = requestedRoleIds({ role, role_ids }, current) as number[];
        if (!sameIds(requested, current)) {
          if (!may(actor, 'users.update')) throw Forbidden.needs('users.update');
          roleIds = requested;
        }
      }
      const password_hash = password === undefined ? undefined : await hashPassword(password);
      const all = { ...changes, ...(password_hash ? { password_hash } : {}), ...(roleIds ? { role_ids: roleIds } : {}) };
      const before = await repository.findById(id);
      const replacedHash = password_hash && passwordRules ? await repository.passwordHash(id) : undefined;
      const change = await repository.update(id, all, clock()).catch(duplicateAsUnprocessable);
      credentialsChanged(id);
      const user = changedUser(change);
      if (password_hash && passwordRules) await passwordRules.replaced(id, replacedHash);
      const changed = before === undefined ? {} : difference(audited(before), audited(user));
      await recordUser(actor, 'user.update', id, password_hash ? { ...changed, password: REDACTED } : changed);
      return user;
    },

    /** First call marks the user deleted (access ends); a second removes the record. */
    async remove(actor: Actor, id: number): Promise<'marked' | 'removed'> {
      assertPermitted(actor, 'users.delete');
      const user = await repository.findById(id);
      if (!user) throw new NotFound();
      // After the write, like every credential change: a check that began before it stores nothing.
      if (user.status === 'deleted') {
        const removed = await repository.remove(id);
        credentialsChanged(id);
        if (!removed) throw new NotFound();
        await recordUser(actor, 'user.remove', id, { login: user.login });
        return 'removed';
      }
      const change = await repository.changeStatus(id, 'deleted', clock());
      credentialsChanged(id);
      changedUser(change);
      await recordUser(actor, 'user.delete', id, { status: [user.status, 'deleted'] });
      return 'marked';
    },

    async suspend(actor: Actor, id: number): Promise<User> {
      assertPermitted(actor, 'users.suspend');
      const before = await repository.findById(id);
      const user = changedUser(await repository.changeStatus(id, 'suspended', clock()));
      credentialsChanged(id);
      await recordUser(actor, 'user.suspend', id, { status: [before?.status ?? null, user.status] });
      return user;
    },

    async activate(actor: Actor, id: number): Promise<User> {
      assertPermitted(actor, 'users.suspend');
      const before = await repository.findById(id);
      const user = changedUser(await repository.changeStatus(id, 'active', clock()));
      credentialsChanged(id);
      await recordUser(actor, 'user.activate', id, { status: [before?.status ?? null, user.status] });
      return user;
    },

    /**
     * A new API key for the user, returned this once; the old one stops working. Through a session,
     * the body carries the actor's `current_password` (`{"user": {...}}` or bare); otherwise it is
     * not read (OnApp clients send none, or `{}`).
     */
    async makeNewApiKey(actor: Actor, id: number, body?: unknown): Promise<{ user: User; apiKey: string }> {
      assertPermittedOnUser(actor, 'users.api_key', id);
      const target = await repository.findById(id);
      if (!target) throw new NotFound();
      assertHoldsAllOf(actor, target);
      await requireCurrentPassword(actor, body, 'user');
      const { key, hash } = newApiKey();
      const user = await repository.setApiKeyHash(id, hash, clock());
      if (!user) throw new NotFound();
      credentialsChanged(id);
      await recordUser(actor, 'user.api_key.create', id, { api_key: REDACTED, default: true });
      return { user, apiKey: key };
    },

    count: () => repository.count(),

    /** A page of the user's API keys (docs/api.md#api-keys): what each is for, never the key. */
    async listApiKeys(actor: Actor, userId: number, limit: number, offset: number): Promise<Page<UserApiKey>> {
      const keys = await keysOf(actor, userId);
      const [items, total] = await Promise.all([keys.page(userId, limit, offset), keys.count(userId)]);
      return { items, total };
    },

    async getApiKey(actor: Actor, userId: number, keyId: number): Promise<UserApiKey> {
      const key = await (await keysOf(actor, userId)).find(userId, keyId);
      if (!key) throw new NotFound();
      return key;
    },

    /**
     * A new API key for the user beside its others, returned this once, with its description
     * (`{"user_api_key": {"description": ...}}` or bare; `description` given as the default when the
     * body has none, for OnApp's generate). Through a session, the body carries the actor's
     * `current_password` as for make_new_api_key. At most apiKeyLimits.perUser keys a user.
     */
    async createApiKey(actor: Actor, userId: number, body: unknown, description?: string): Promise<{ key: UserApiKey; apiKey: string }> {
      const keys = await keysOf(actor, userId, true);
      const fields = unwrapRecord(body ?? {}, 'user_api_key');
      const errors = new FieldErrors();
      const given = stringField(fields, 'description', errors, { required: description === undefined, max: apiKeyLimits.description });
      if (actor.viaSession && actor.id !== null) {
        await currentPasswordCheck(fields, () => repository.passwordHash(actor.id as number), () => countGuess(actor.id as number, actor.address), actor, clock)(errors);
      }
      errors.throwIfAny();
      const { key, hash } = newApiKey();
      const created = await keys.create(userId, given ?? (description as string), hash, apiKeyLimits.perUser, clock());
      if (created === undefined) throw new NotFound();
      if (created === 'limit') throw new Unprocessable({ base: [`A user has at most ${apiKeyLimits.perUser} API keys: revoke one first`] });
      await recordUser(actor, 'user.api_key.create', userId, { key_id: created.id, description: created.description, api_key: REDACTED });
      return { key: created, apiKey: key };
    },

    /** Revokes one of the user's API keys: refused from the next request on, in every process; ends the user's sessions. */
    async revokeApiKey(actor: Actor, userId: number, keyId: number): Promise<void> {
      const keys = await keysOf(actor, userId);
      const outcome = await keys.revoke(userId, keyId);
      credentialsChanged(userId);
      if (outcome === 'not_found') throw new NotFound();
      await recordUser(actor, 'user.api_key.revoke', userId, { key_id: keyId });
    },
  };
}

export type UsersService = ReturnType<typeof usersService>;
