import { generatePassword } from './passwords.js';
import type { User } from './user.js';
import { SYSTEM } from '../roles/authorization.js';
import type { UsersService } from './users.service.js';

export interface FirstAdministrator {
  user: User;
  /** Set when cmi generated the password: the only time it is ever shown. */
  generatedPassword?: string;
}

/**
 * On an empty database, creates the administrator an operator logs in with first. Returns undefined
 * when users already exist, or when another process created the first one at the same moment.
 */
export async function createFirstAdministrator(
  users: UsersService,
  settings: { login: string; email: string; password: string | undefined },
): Promise<FirstAdministrator | undefined> {
  if ((await users.count()) > 0) return undefined;
  const generatedPassword = settings.password === undefined ? generatePassword() : undefined;
  try {
    const user = await users.create(SYSTEM, {
      login: settings.login,
      email: settings.email,
      password: settings.password ?? generatedPassword,
      role: 'admin',
      first_name: 'Administrator',
    });
    return { user, generatedPassword };
  } catch (error) {
    if ((await users.count()) > 0) return undefined;
    throw error;
  }
}
