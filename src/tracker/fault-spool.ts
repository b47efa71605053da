import { appendFileSync, mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorReport } from './infrastructure-error.js';

const SPOOLED = /^faults-\d+-\d+\.jsonl$/;

/**
 * Faults a dying process could not write to the database (an uncaught exception ends it before any
 * query could finish), kept as JSON lines in `directory` and recorded by the next process that starts
 * (docs/operations.md#faults-of-cmi). Each file is taken by renaming it first, so two processes
 * starting together never record one twice.
 */
export function faultSpool(directory: string) {
  return {
    /** Synchronous: safe in an uncaughtException handler. */
    writeSync(reports: readonly ErrorReport[]): void {
      if (reports.length === 0) return;
      mkdirSync(directory, { recursive: true, mode: 0o700 });
      const lines = reports.map((report) => `${JSON.stringify(report)}\n`).join('');
      appendFileSync(join(directory, `faults-${process.pid}-${Date.now()}.jsonl`), lines, { mode: 0o600 });
    },

    /** Takes every spooled file: its reports, and a function that deletes it once they are recorded. */
    take(): Array<{ reports: ErrorReport[]; done: () => void }> {
      let names: string[];
      try {
        names = readdirSync(directory).filter((name) => SPOOLED.test(name));
      } catch {
        return [];
      }
      const taken = [];
      for (const name of names) {
        const claimed = join(directory, `${name}.taken-${process.pid}`);
        try {
          renameSync(join(directory, name), claimed);
        } catch {
          continue; // another process took it first
        }
        const reports = readFileSync(claimed, 'utf8').split('\n').filter(Boolean).flatMap((line) => {
          try {
            const parsed = JSON.parse(line) as ErrorReport & { occurred_at: string };
            return [{ ...parsed, occurred_at: new Date(parsed.occurred_at) }];
          } catch {
            return []; // a line cut short as the process died
          }
        });
        taken.push({ reports, done: () => unlinkSync(claimed) });
      }
      return taken;
    },
  };
}

export type FaultSpool = ReturnType<typeof faultSpool>;
