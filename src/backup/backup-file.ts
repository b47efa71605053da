import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';

/**
 * A backup file (docs/operations.md#backup-and-restore): gzip-compressed lines of JSON. The first
 * line is the header; then, for each table, a line naming it and its columns, one line per row (an
 * array of its values, in column order) and a line ending it with its row count; the last line ends
 * the backup with every table's row count and the SHA-256 of every line before it. A file that stops
 * early, or whose bytes changed, fails that check.
 */
export const BACKUP_FORMAT = 'cmi-backup';
export const BACKUP_FORMAT_VERSION = 1;

export interface BackupHeader {
  format: typeof BACKUP_FORMAT;
  format_version: number;
  /** The version of cmi that took it. */
  cmi_version: string;
  /** Every migration the database had, in order; the last is its schema version. */
  migrations: string[];
  /** The database it was taken from: sqlite or postgres. */
  database: string;
  taken_at: string;
  /** The tables it holds, in the order they follow. */
  tables: string[];
}

export interface BackupEnd {
  backup_end: true;
  rows: Record<string, number>;
  sha256: string;
}

export type Cell = string | number | null;

/** A backup that cannot be restored, with why, in one line. */
export class BadBackup extends Error {}

/** Writes the lines of a backup and keeps their checksum and row counts. */
export class BackupLines {
  private readonly hash = createHash('sha256');
  readonly rows: Record<string, number> = {};

  constructor(private readonly out: (line: string) => Promise<void>) {}

  private async line(value: unknown): Promise<void> {
    const text = `${JSON.stringify(value)}\n`;
    this.hash.update(text);
    await this.out(text);
  }

  header(header: BackupHeader): Promise<void> {
    return this.line(header);
  }

  async table(table: string, columns: string[], pages: AsyncIterable<Cell[][]>): Promise<void> {
    await this.line({ table, columns });
    let count = 0;
    for await (const page of pages) {
      for (const row of page) await this.line(row);
      count += page.length;
    }
    this.rows[table] = count;
    await this.line({ table_end: table, rows: count });
  }

  end(): Promise<void> {
    const end: BackupEnd = { backup_end: true, rows: this.rows, sha256: this.hash.digest('hex') };
    return this.out(`${JSON.stringify(end)}\n`);
  }
}

/** One table of a backup as it is read: its columns and, a batch at a time, its rows. */
export interface BackupTable {
  table: string;
  columns: string[];
  batches: AsyncIterable<Cell[][]>;
}

/**
 * Reads the backup in `file`: its header, then each table in turn. With `check`, it only reads the
 * whole file through, and throws BadBackup unless every line is in place and the checksum and the row
 * counts agree; restore does that first, so it changes nothing when the file is bad.
 */
export async function readBackup(file: string, onTable?: (table: BackupTable) => Promise<void>, batchSize = 500): Promise<{ header: BackupHeader; end: BackupEnd; columns: Record<string, string[]> }> {
  const lines = createInterface({ input: createReadStream(file).pipe(createGunzip()), crlfDelay: Infinity })[Symbol.asyncIterator]();
  const hash = createHash('sha256');
  let lineNumber = 0;
  const next = async (): Promise<unknown> => {
    let result: IteratorResult<string>;
    try {
      result = await lines.next();
    } catch (error) {
      throw new BadBackup(`it is not a whole gzip file (${(error as Error).message})`);
    }
    if (result.done) throw new BadBackup('it ends before its last line: the file is truncated');
    lineNumber += 1;
    try {
      const value: unknown = JSON.parse(result.value);
      if (!isBackupEnd(value)) hash.update(`${result.value}\n`);
      return value;
    } catch {
      throw new BadBackup(`line ${lineNumber} is not JSON: the file is damaged`);
    }
  };
  const header = await next();
  if (!isHeader(header)) throw new BadBackup('it does not start with a cmi backup header');
  if (header.format_version !== BACKUP_FORMAT_VERSION) throw new BadBackup(`it is in backup format ${String(header.format_version)}, and this cmi reads format ${BACKUP_FORMAT_VERSION}`);
  const counted: Record<string, number> = {};
  const tableColumns: Record<string, string[]> = {};
  for (const table of header.tables) {
    const start = await next() as { table?: unknown; columns?: unknown };
    if (start.table !== table || !Array.isArray(start.columns) || !start.columns.every((c) => typeof c === 'string')) {
      throw new BadBackup(`line ${lineNumber} should start table ${table}: the file is damaged`);
    }
    const columns = start.columns;
    tableColumns[table] = columns;
    let count = 0;
    let ended: { rows: unknown } | undefined;
    async function* batches(): AsyncGenerator<Cell[][]> {
      let batch: Cell[][] = [];
      for (;;) {
        const value = await next();
        if (!Array.isArray(value)) {
          const end = value as { table_end?: unknown; rows?: unknown };
          if (end.table_end !== table) throw new BadBackup(`line ${lineNumber} should end table ${table}: the file is damaged`);
          ended = { rows: end.rows };
          break;
        }
        if (value.length !== columns.length) throw new BadBackup(`line ${lineNumber} has ${value.length} values for ${columns.length} columns of ${table}`);
        batch.push(value as Cell[]);
        count += 1;
        if (batch.length === batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (batch.length > 0) yield batch;
    }
    const reading = batches();
    if (onTable) await onTable({ table, columns, batches: reading });
    // Whatever onTable left unread is read through, so the checksum covers every line.
    for await (const batch of reading) void batch;
    if (ended?.rows !== count) throw new BadBackup(`table ${table} has ${count} rows where its end says ${String(ended?.rows)}`);
    counted[table] = count;
  }
  const end = await next();
  if (!isBackupEnd(end)) throw new BadBackup(`line ${lineNumber} should end the backup: the file is damaged`);
  if (end.sha256 !== hash.digest('hex')) throw new BadBackup('its checksum does not match its contents: the file is damaged');
  if (JSON.stringify(end.rows) !== JSON.stringify(counted)) throw new BadBackup('its row counts do not match its contents: the file is damaged');
  if (!(await lines.next()).done) throw new BadBackup('it goes on after its last line: the file is damaged');
  return { header, end, columns: tableColumns };
}

function isHeader(value: unknown): value is BackupHeader {
  const header = value as Partial<BackupHeader> | null;
  return typeof header === 'object' && header !== null && header.format === BACKUP_FORMAT && Array.isArray(header.migrations)
    && header.migrations.every((m) => typeof m === 'string') && Array.isArray(header.tables) && header.tables.every((t) => typeof t === 'string')
    && typeof header.cmi_version === 'string' && typeof header.database === 'string' && typeof header.taken_at === 'string';
}

function isBackupEnd(value: unknown): value is BackupEnd {
  return typeof value === 'object' && value !== null && (value as { backup_end?: unknown }).backup_end === true;
}
