import { type Config, ConfigError } from '../config.js';
import { Unprocessable } from '../domain/errors.js';
import { systemClock } from '../domain/clock.js';
import { createFirstAdministrator } from '../domain/first-administrator.js';
import { usersService } from '../domain/users.js';
import { buildApp } from '../server/app.js';
import { displayDatabaseUrl, migrateToLatest, openDatabase } from '../store/database.js';
import { usersRepository } from '../store/users-repository.js';

const ADMIN_VARIABLES: Record<string, string> = { login: 'CMI_ADMIN_LOGIN', email: 'CMI_ADMIN_EMAIL', password: 'CMI_ADMIN_PASSWORD' };

/** A rejected first-administrator field, told as the variable it came from. */
function asAdminSettingError(error: unknown): unknown {
  if (!(error instanceof Unprocessable)) return error;
  const [field, messages] = Object.entries(error.messages)[0] ?? ['base', []];
  return new ConfigError(`${ADMIN_VARIABLES[field] ?? field} ${messages[0] ?? 'is invalid'}`);
}

/** Opens and migrates the database, creates the first administrator if needed, and listens. */
export async function serve(config: Config): Promise<void> {
  const database = openDatabase(config.databaseUrl, config.pool);
  await migrateToLatest(database);
  const first = await createFirstAdministrator(usersService(usersRepository(database.db), systemClock), {
    login: config.adminLogin,
    email: config.adminEmail,
    password: config.adminPassword,
  }).catch(async (error: unknown) => {
    await database.close();
    throw asAdminSettingError(error);
  });

  const app = await buildApp({ config, database });
  const address = await app.listen({ host: config.host, port: config.port });
  const base = address.replace('0.0.0.0', '127.0.0.1');
  console.log(`cmi listening on ${base} (${displayDatabaseUrl(config.databaseUrl)})`);
  if (first?.generatedPassword) {
    console.log(`Created administrator "${first.user.login}" with password: ${first.generatedPassword}`);
    console.log('This password is shown only once. Try:');
    console.log(`  curl -u '${first.user.login}:${first.generatedPassword}' ${base}/version.json`);
  } else if (first) {
    console.log(`Created administrator "${first.user.login}" with the password from CMI_ADMIN_PASSWORD.`);
    console.log(`Try: curl -u '${first.user.login}:<password>' ${base}/version.json`);
  } else {
    console.log(`Log in with an existing user: curl -u '<login>:<password>' ${base}/version.json`);
  }

  const shutdown = async (signal: string) => {
    console.log(`${signal}: closing`);
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
