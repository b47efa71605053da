import { DatabaseUnavailable } from '../db/dialects/connection/database-unavailable.js';
import { ServiceUnavailable } from './problems.js';

export interface GroupCommitOptions {
  /** Items waiting (not yet in a batch being written) beyond which a new one is refused with 503. */
  maxPending: number;
  /** The most items one batch writes. */
  maxBatch: number;
}

/**
 * Group commit (docs/architecture.md#error-ingestion): items submitted while a batch is being written
 * wait for the next one, and the next batch starts as soon as the last one ends, so each transaction
 * carries everything that arrived meanwhile and no item waits longer than one write. `submit`
 * resolves once the item's batch has committed, with the answer `write` gave for it. A batch that
 * fails is written again one item at a time, so an item rejects only with its own write's error and
 * one bad item never fails the others. Memory is bounded: past `maxPending` waiting items, submit throws a 503.
 */
export function groupCommit<Item, Answer>(write: (items: Item[]) => Promise<Answer[]>, options: GroupCommitOptions) {
  type Waiting = { item: Item; resolve: (answer: Answer) => void; reject: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let writing = false;
  let scheduled = false;
  const idle: Array<() => void> = [];

  const writeNext = async (): Promise<void> => {
    scheduled = false;
    if (writing || waiting.length === 0) return;
    writing = true;
    const batch = waiting.slice(0, options.maxBatch);
    waiting = waiting.slice(batch.length);
    try {
      const answers = await write(batch.map((entry) => entry.item));
      batch.forEach((entry, i) => entry.resolve(answers[i] as Answer));
    } catch (error) {
      // One bad item must not fail the others: each is written again alone, and only those whose
      // own write fails answer with an error. Not when the database cannot serve: every write would
      // wait for it again, one item at a time.
      if (batch.length === 1 || error instanceof DatabaseUnavailable) for (const entry of batch) entry.reject(error);
      else for (const entry of batch) await write([entry.item]).then((answers) => entry.resolve(answers[0] as Answer), entry.reject);
    } finally {
      writing = false;
      if (waiting.length > 0) schedule();
      else for (const done of idle.splice(0)) done();
    }
  };

  // The first item of a batch waits for the I/O already received in this turn of the event loop:
  // requests that arrived together are written together.
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => void writeNext());
  };

  return {
    submit(item: Item): Promise<Answer> {
      if (waiting.length >= options.maxPending) throw new ServiceUnavailable('the write queue is full', 1);
      return new Promise<Answer>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        if (!writing) schedule();
      });
    },

    /** Resolves when nothing waits and nothing is being written (shutdown). */
    drained(): Promise<void> {
      if (!writing && waiting.length === 0) return Promise.resolve();
      return new Promise((resolve) => idle.push(resolve));
    },

    get pending(): number {
      return waiting.length;
    },
  };
}

export type GroupCommit<Item, Answer> = ReturnType<typeof groupCommit<Item, Answer>>;
