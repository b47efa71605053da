import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { DatabaseMissing, openDatabase } from '../db/database.js';
import { dialectFor, displayDatabaseUrl } from '../db/database-url.js';
import { BadBackup } from '../backup/backup-file.js';
import { type BackupSummary, takeBackup } from '../backup/backup.js';
import { type CheckedBackup, checkBackup, RestoreFailed, restoreBackup } from '../backup/restore.js';
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

/** An error of the file system (ENOENT, EISDIR, EACCES...), which says what and where in one line. */
const fileError = (error: unknown): error is NodeJS.ErrnoException =>
  error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string';

/** What stat says of `path`: a file, a folder, nothing there, or the error that stopped it. */
function kindOf(path: string): 'file' | 'folder' | 'missing' | NodeJS.ErrnoException {
  try {
    return statSync(path).isDirectory() ? 'folder' : 'file';
  } catch (error) {
    if (fileError(error) && (error.code === 'ENOENT' || error.code === 'ENOTDIR')) return 'missing';
    if (fileError(error)) return error;
    throw error;
  }
}

/** Why a backup cannot be written to `file`, in words with what to do, before the database is opened; undefined when it can be tried. */
function unwritable(file: string): string | undefined {
  const kind = kindOf(file);
  if (kind === 'folder') return `it is a folder: give the path of a file in it, e.g. ${join(file, 'cmi.backup')}`;
  const folder = dirname(file);
  const parent = kindOf(folder);
  if (parent === 'missing') return `there is no folder ${folder}: create it first, or give a path in a folder that exists`;
  if (parent === 'file') return `${folder} is a file, not a folder: give a path in a folder that exists`;
  return undefined;
}

/** Why `file` cannot be restored from, before anything is opened; undefined when it is a file to read. */
function unreadable(file: string): string | undefined {
  const kind = kindOf(file);
  if (kind === 'missing') return 'there is no such file: check the path';
  if (kind === 'folder') return 'it is a folder, not a backup file: give the path of a file cmi backup wrote';
  if (typeof kind !== 'string') return `it cannot be read (${kind.message})`;
  return undefined;
}

/** `cmi backup FILE` and `cmi restore FILE` on the configured database (docs/operations.md#backup-and-restore). */
export function addBackupCommands(program: Command): void {
  program
    .command('backup')
    .description('write a consistent backup of the configured database to FILE while it keeps serving')
    .argument('<file>', 'where to write the backup (replaced if it exists)')
    .option('--json', 'print what was written as JSON')
    .action(async (file: string, options: { json?: boolean }) => {
      const config = loadConfig(cliEnv());
      const target = fromCwd(file);
      // Checked before the database is opened: one line and nothing written (docs/operations.md#backup-and-restore).
      const problem = unwritable(target);
      if (problem !== undefined) throw new Refusal(`cannot write a backup to ${target}: ${problem}`);
      let database;
      try {
        database = openDatabase(config, { mustExist: true });
      } catch (error) {
        if (error instanceof DatabaseMissing) throw new UsageError(`no cmi database at ${error.where}: point DATABASE_URL at yours`);
        throw error;
      }
      try {
        const summary = await takeBackup(database, target, cmiVersion());
        write(options.json ? exact(JSON.stringify(summary)) : human(backupLine(summary)));
      } catch (error) {
        if (error instanceof Error && /nothing to back up/.test(error.message)) throw new Refusal(`${displayDatabaseUrl(config.databaseUrl)}: ${error.message}`);
        if (fileError(error)) throw new Refusal(`cannot write a backup to ${target}: ${error.message}`);
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
      const source = fromCwd(file);
      // The file is read through and checked before the database is opened (a SQLite file would be created).
      const problem = unreadable(source);
      if (problem !== undefined) throw new Refusal(`cannot restore ${source}: ${problem}; nothing was changed`);
      let checked: CheckedBackup;
      try {
        checked = await checkBackup(source, dialectFor(config.databaseUrl));
      } catch (error) {
        if (error instanceof BadBackup) throw new Refusal(`cannot restore ${source}: ${error.message}; nothing was changed`);
        if (fileError(error)) throw new Refusal(`cannot restore ${source}: it cannot be read (${error.message}); nothing was changed`);
        throw error;
      }
      const database = openDatabase(config);
      const replacedBackupFile = `${source}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      try {
        const summary = await restoreBackup(database, checked, {
          force: options.force === true, replacedBackupFile, cmiVersion: cmiVersion(),
          // Told as soon as it is written, so that it is known even if the restore is then cut short.
          onReplacedBackup: (replaced) => { if (!options.json) complain(backupLine(replaced)); },
        });
        // The restored trail goes on with the restore itself (docs/security.md#what-is-audited).
        await auditTrailOn(database, systemClock, config.auditRetentionDays).record(OPERATOR, {
          action: 'database.restore', target_type: 'database', target_id: null,
          changes: { file: source, schema_version: summary.schema_version, migrated: summary.migrated, rows: summary.rows, replaced_backup: summary.replaced_backup?.file ?? null },
        });
        if (options.json) {
          write(exact(JSON.stringify(summary)));
          return;
        }
        write(human(
          `Restored ${rowsInWords(summary.rows)} (schema ${summary.schema_version}) from ${source}`,
          ...(summary.migrated.length > 0 ? [`Then applied ${summary.migrated.join(', ')}`] : []),
        ));
      } catch (error) {
        const kept = error instanceof RestoreFailed && error.replacedBackup ? ` (the backup of the database taken first is at ${error.replacedBackup.file})` : '';
        if (error instanceof BadBackup) throw new Refusal(`cannot restore ${source}: ${error.message}; nothing was changed${kept}`);
        if (fileError(error)) throw new Refusal(`cannot restore ${source}: ${error.message}; nothing was changed`);
        throw error;
      } finally {
        await database.close();
      }
    });
}
