import { systemClock } from '../domain/clock.js';
import { usersService } from '../domain/users.js';
import type { Database } from '../store/database.js';
import { usersRepository } from '../store/users-repository.js';

export interface CreateUserOptions {
  login: string;
  email: string;
  password: string;
  admin?: boolean;
  firstName?: string;
  lastName?: string;
}

/** `cmi users create`: adds a user straight to the database (safe while a server runs on it). */
export async function createUserCommand(database: Database, options: CreateUserOptions): Promise<string> {
  const user = await usersService(usersRepository(database.db), systemClock).create({
    login: options.login,
    email: options.email,
    password: options.password,
    role: options.admin ? 'admin' : 'user',
    first_name: options.firstName,
    last_name: options.lastName,
  });
  return `Created ${user.role === 'admin' ? 'administrator' : 'user'} ${user.id} "${user.login}" <${user.email}>`;
}
