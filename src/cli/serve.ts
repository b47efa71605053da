import type { Config } from '../config.js';
import { systemClock } from '../domain/clock.js';
import { createFirstAdministrator } from '../domain/first-administrator.js';
import { usersService } from '../domain/users.js';
import { buildApp } from '../server/app.js';
import { migrateToLatest, openDatabase } from '../store/database.js';
import { usersRepository } from '../store/users-repository.js';

/** Opens and migrates the database, creates the first administrator if needed, and listens. */
export async function serve(config: Config): Promise<void> {
  const database = openDatabase(config.databaseUrl, config.pool);
  await migrateToLatest(database);
  const first = await createFirstAdministrator(usersService(usersRepository(database.db), systemClock), {
    login: config.adminLogin,
    email: config.adminEmail,
    password: config.adminPassword,
  });

  const app = await buildApp({ config, database });
  const address = await app.listen({ host: config.host, port: config.port });
  const base = address.replace('0.0.0.0', '127.0.0.1');
  console.log(`cmi listening on ${base} (${config.databaseUrl})`);
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
