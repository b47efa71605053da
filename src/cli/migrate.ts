import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { migrateToLatest, openDatabase } from '../db/database.js';
import { complain, human, write } from './common/output.js';
import { cliEnv } from './common/io.js';

/** `cmi migrate`: applies the pending migrations to the configured database (docs/operations.md). */
export function addMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const database = openDatabase(loadConfig(cliEnv()));
      try {
        const applied = await migrateToLatest(database, { onWait: complain });
        write(human(applied.length === 0 ? 'Database is up to date' : `Applied ${applied.join(', ')}`));
      } finally {
        await database.close();
      }
    });
}
