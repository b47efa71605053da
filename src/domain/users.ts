import type { Clock } from './clock.js';
import { FieldErrors, Unprocessable } from './errors.js';
import { userLimits } from './limits.js';
import { hashPassword } from './passwords.js';
import type { Page, Role, User } from './records.js';
import { stringField } from './request-body.js';
import { DuplicateValue, type UsersRepository } from '../store/users-repository.js';

export interface NewUserInput {
  login: string;
  email: string;
  password: string;
  first_name: string;
  last_name: string;
  role: Role;
  time_zone: string | null;
  locale: string | null;
}

const LOGIN = /^[A-Za-z0-9_.][A-Za-z0-9_@.-]*$/;
// Deliberately plain: one @ and no spaces (local domains such as admin@localhost are fine).
const EMAIL = /^[^\s@]+@[^\s@]+$/;

/** Checks every field of a new user and names each bad one in a single 422. */
export function validateNewUser(fields: Record<string, unknown>): NewUserInput {
  const errors = new FieldErrors();
  const login = stringField(fields, 'login', errors, { required: true, max: userLimits.loginMax });
  if (login !== undefined && (login.length < userLimits.loginMin || !LOGIN.test(login))) {
    errors.add('login', `must be ${userLimits.loginMin}-${userLimits.loginMax} characters of letters, digits and _ @ . -, not starting with - or @`);
  }
  const email = stringField(fields, 'email', errors, { required: true, max: userLimits.email });
  if (email !== undefined && !EMAIL.test(email)) errors.add('email', 'is invalid');
  const password = stringField(fields, 'password', errors, { required: true, max: userLimits.passwordMaxBytes });
  if (password !== undefined) {
    if ([...password].length < userLimits.passwordMinChars) {
      errors.add('password', `is too short (minimum is ${userLimits.passwordMinChars} characters)`);
    } else if (Buffer.byteLength(password) > userLimits.passwordMaxBytes) {
      errors.add('password', `is too long (maximum is ${userLimits.passwordMaxBytes} bytes)`);
    }
  }
  const first_name = stringField(fields, 'first_name', errors, { required: false, max: userLimits.name }) ?? '';
  const last_name = stringField(fields, 'last_name', errors, { required: false, max: userLimits.name }) ?? '';
  const time_zone = stringField(fields, 'time_zone', errors, { required: false, max: userLimits.timeZone }) ?? null;
  const locale = stringField(fields, 'locale', errors, { required: false, max: userLimits.locale }) ?? null;
  const role = stringField(fields, 'role', errors, { required: false, max: 16 }) ?? 'user';
  if (role !== 'admin' && role !== 'user') errors.add('role', 'must be admin or user');
  errors.throwIfAny();
  return {
    login: login as string,
    email: (email as string).toLowerCase(),
    password: password as string,
    first_name,
    last_name,
    role: role as Role,
    time_zone,
    locale,
  };
}

export function usersService(repository: UsersRepository, clock: Clock) {
  return {
    async create(fields: Record<string, unknown>): Promise<User> {
      const input = validateNewUser(fields);
      const { password, ...rest } = input;
      try {
        return await repository.create({ ...rest, password_hash: await hashPassword(password) }, clock());
      } catch (error) {
        if (error instanceof DuplicateValue) throw new Unprocessable({ [error.field]: ['has already been taken'] });
        throw error;
      }
    },

    /** What `viewer` may list: everyone for an administrator, only itself for a user. */
    async list(viewer: User, limit: number, offset: number): Promise<Page<User>> {
      const onlyId = viewer.role === 'admin' ? undefined : viewer.id;
      const total = await repository.count(onlyId);
      const items = offset >= total ? [] : await repository.page(limit, offset, onlyId);
      return { items, total };
    },

    count: () => repository.count(),
  };
}

export type UsersService = ReturnType<typeof usersService>;
