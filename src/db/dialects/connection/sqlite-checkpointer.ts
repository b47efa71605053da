import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the checkpointer copies what the WAL holds into the database file, in milliseconds. */
const CHECKPOINT_INTERVAL_MS = 250;

/**
 * The checkpointer's thread (CommonJS, run with `eval`: no file of its own to find from src/ or dist/):
 * its own connection to the database, a passive checkpoint every `intervalMs` (it waits for no lock and
 * blocks no reader nor writer), and on the message to stop, the connection closed and the thread ended.
 */
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 0');
let checkpoint;
const timer = setInterval(() => {
  // Prepared in the first turn that can: a turn that finds the database locked (another process's
  // checkpoint, a migration switching it to WAL, a sqlite3 shell) leaves the copying to the next.
  try { (checkpoint ??= db.prepare('PRAGMA wal_checkpoint(PASSIVE)')).get(); } catch {}
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Ends the thread once its connection is closed. */
  stop: () => Promise<void>;
}

/**
 * Copies the WAL into the database file from a thread of its own (docs/architecture.md#sqlite-checkpoints),
 * so the serving connection's event loop never waits for a checkpoint's writes and syncs. The serving
 * connection keeps its own automatic checkpoint as the fallback: should the thread fail or fall behind,
 * the WAL is still copied when it reaches that connection's limit, as before.
 */
export function startCheckpointer(path: string, intervalMs = CHECKPOINT_INTERVAL_MS): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(SOURCE, {
    eval: true,
    workerData: { path, driver, intervalMs },
    // A connection and a timer: a small heap is plenty (and keeps the process's RSS near what it was).
    resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
  });
  // Not a reason for the process to stay up; a thread that fails (the file gone) leaves the fallback.
  worker.unref();
  const ended = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => {});
  return {
    stop: async () => {
      // Held up by the thread again until it has closed its connection and ended.
      worker.ref();
      worker.postMessage('stop');
      await ended;
    },
  };
}
