import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { DatabaseMissing, openDatabase } from '../db/database.js';
import { displayDatabaseUrl } from '../db/database-url.js';
import { BadBackup } from '../backup/backup-file.js';
import { type BackupSummary, takeBackup } from '../backup/backup.js';
import { restoreBackup } from '../backup/restore.js';
import { auditTrailOn } from '../audit/audit-trail.js';
import { OPERATOR } from '../roles/authorization.js';
import { systemClock } from '../shared/clock.js';
import { cmiVersion } from '../version/version.js';
import { complain, exact, human, write } from './common/output.js';
import { Refusal, UsageError } from './common/usage-error.js';
import { cliEnv, fromCwd } from './common/io.js';

const rowsInWords = (rows: Record<string, number>) =>
  `${rows.users ?? 0} users, ${rows.roles ?? 0} roles, ${rows.infrastructure_errors ?? 0} errors, ${rows.error_occurrences ?? 0} occurrences`;

const backupLine = (summary: BackupSummary) =>
  `Backed up ${rowsInWords(summary.rows)} (schema ${summary.schema_version}) to ${summary.file}: ${summary.bytes} bytes, checked`;

/** `cmi backup FILE` and `cmi restore FILE` on the configured database (docs/operations.md#backup-and-restore). */
export function addBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write a consistent backup of the configured database to FILE while it keeps serving')
    .argument('<file>', 'where to write the backup (replaced if it exists)')
    .option('--json', 'print what was written as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const config = loadConfig(cliEnv());
      let database;
      try {
        database = openDatabase(config, { mustExist: true });
      } catch (error) {
        if (error instanceof DatabaseMissing) throw new UsageError(`no cmi database at ${error.where}: point DATABASE_URL at yours`);
        throw error;
      }
      try {
        const summary = await takeBackup(database, fromCwd(file), cmiVersion());
        write(options.json ? exact(JSON.stringify(summary)) : human(backupLine(summary)));
      } catch (error) {
        if (error instanceof Error && /nothing to back up/.test(error.message)) throw new Refusal(`${displayDatabaseUrl(config.databaseUrl)}: ${error.message}`);
        throw error;
      } finally {
        await database.close();
      }
    });

  program
    .command('restore')
    .description('restore a backup into the configured database, which must be empty (or --force)')
    .argument('<file>', 'a file cmi backup wrote')
    .option('--force', 'replace a database that holds data, after writing a backup of it beside FILE')
    .option('--json', 'print what was restored as JSON')
    .action(async (file: string, options: { force?: boolean; json?: boolean }) => {
      const config = loadConfig(cliEnv());
      const database = openDatabase(config);
      const source = fromCwd(file);
      const replacedBackupFile = `${source}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        const summary = await restoreBackup(database, source, { force: options.force === true, replacedBackupFile, cmiVersion: cmiVersion() });
        // The restored trail goes on with the restore itself (docs/security.md#what-is-audited).
        await auditTrailOn(database, systemClock, config.auditRetentionDays).record(OPERATOR, {
          action: 'database.restore', target_type: 'database', target_id: null,
          changes: { file: source, schema_version: summary.schema_version, migrated: summary.migrated, rows: summary.rows, replaced_backup: summary.replaced_backup?.file ?? null },
        });
        if (options.json) {
          write(exact(JSON.stringify(summary)));
          return;
        }
        if (summary.replaced_backup) complain(backupLine(summary.replaced_backup));
        write(human(
          `Restored ${rowsInWords(summary.rows)} (schema ${summary.schema_version}) from ${source}`,
          ...(summary.migrated.length > 0 ? [`Then applied ${summary.migrated.join(', ')}`] : []),
        ));
      } catch (error) {
        if (error instanceof BadBackup) throw new Refusal(`cannot restore ${source}: ${error.message}; nothing was changed`);
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Refusal(`cannot restore ${source}: no such file`);
        throw error;
      } finally {
        await database.close();
      }
    });
}
