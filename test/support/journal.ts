import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * Journals for the journald tests (docs/log-sources.md#journald-systemd-journal-upload): files made with the real
 * systemd-journal-remote, sent with the real systemd-journal-upload (both from Debian's systemd-journal-remote package).
 */

export const REMOTE = '/lib/systemd/systemd-journal-remote';
export const UPLOAD = '/lib/systemd/systemd-journal-upload';
export const BOOT = '0123456789abcdef0123456789abcdef';

export type Field = [string, string | Buffer];

/** Entries in the journal export format: `NAME=value`, a Buffer value as a binary field (little-endian 64-bit length). */
export function exportText(entries: Field[][]): Buffer {
  const parts: Buffer[] = [];
  for (const fields of entries) {
    for (const [name, value] of fields) {
      if (typeof value === 'string') {
        parts.push(Buffer.from(`${name}=${value}\n`));
      } else {
        const length = Buffer.alloc(8);
        length.writeBigUInt64LE(BigInt(value.length));
        parts.push(Buffer.from(`${name}\n`), length, value, Buffer.from('\n'));
      }
    }
    parts.push(Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (ended after `limitMs`, a bound, never a wait), `input` on its stdin. */
export function run(program: string, args: string[], input?: Buffer, limitMs = 20_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    // No input: no pipe (a program that never reads its stdin and ends at once would make the write an EPIPE).
    const child = spawn(program, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const bound = setTimeout(() => child.kill('SIGKILL'), limitMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined && child.stdin !== null) {
      // A program that ends before it read all of it: its exit code and stderr say why, not the pipe.
      child.stdin.on('error', (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EPIPE') reject(error);
      });
      child.stdin.end(input);
    }
  });
}

/** Appends entries to a journal file (made when missing) with systemd-journal-remote. */
export async function appendToJournal(file: string, entries: Field[][]): Promise<void> {
  const result = await run(REMOTE, [`--output=${file}`, '-'], exportText(entries));
  assert.equal(result.code, 0, `systemd-journal-remote failed: ${result.stderr}`);
}

/** The cursors of a journal file's entries, as journalctl reads them. */
export async function cursorsOf(file: string): Promise<string[]> {
  const result = await run('journalctl', [`--file=${file}`, '-o', 'export', '--no-pager'], undefined);
  assert.equal(result.code, 0, result.stderr);
  return [...result.stdout.matchAll(/^__CURSOR=(.*)$/gm)].map((match) => match[1]!);
}

/** The cursor systemd-journal-upload saved in its state file. */
export function savedCursor(stateFile: string): string | undefined {
  try {
    return /^LAST_CURSOR=(.*)$/m.exec(readFileSync(stateFile, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/** An entry as systemd-journal-remote takes it (it needs both timestamps and a boot id). */
export function entry(seconds: number, fields: Field[]): Field[] {
  return [
    ['__REALTIME_TIMESTAMP', `${1_764_745_200 + seconds}000000`],
    ['__MONOTONIC_TIMESTAMP', `${1000 + seconds * 1_000_000}`],
    ['_BOOT_ID', BOOT],
    ...fields,
  ];
}
