import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DatabaseUnavailable } from '../src/db/dialects/connection/database-unavailable.js';
import { ServiceUnavailable, TooManyRequests } from '../src/shared/problems.js';
import { groupCommit } from '../src/shared/group-commit.js';
import { rateLimit } from '../src/shared/rate-limit.js';
import { testClock } from './support/clock.js';

/** A write that records its batches and finishes when the test says so. */
function gatedWriter() {
  const batches: number[][] = [];
  let release: (() => void) | undefined;
  let fail = false;
  return {
    batches,
    failNext: () => (fail = true),
    release: () => release?.(),
    write: (items: number[]) => {
      batches.push(items);
      return new Promise<string[]>((resolve, reject) => {
        release = () => (fail ? ((fail = false), reject(new Error('disk full'))) : resolve(items.map((item) => `ok ${item}`)));
      });
    },
  };
}

/** Lets every write the queue has scheduled start (a few turns of the event loop). */
const tick = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

// docs/architecture.md#error-ingestion
describe('group commit', () => {
  it('writes what arrived together as one batch, and what arrived during a write as the next one', async () => {
    const writer = gatedWriter();
    const queue = groupCommit(writer.write, { maxPending: 100, maxBatch: 100 });
    const first = [1, 2, 3].map((item) => queue.submit(item));
    await tick();
    assert.deepEqual(writer.batches, [[1, 2, 3]]);
    const second = [4, 5].map((item) => queue.submit(item));
    await tick();
    assert.deepEqual(writer.batches, [[1, 2, 3]], 'nothing is written while a batch is being written');
    writer.release();
    assert.deepEqual(await Promise.all(first), ['ok 1', 'ok 2', 'ok 3']);
    await tick();
    assert.deepEqual(writer.batches, [[1, 2, 3], [4, 5]]);
    writer.release();
    assert.deepEqual(await Promise.all(second), ['ok 4', 'ok 5']);
    await queue.drained();
  });

  it('splits batches at maxBatch', async () => {
    const writer = gatedWriter();
    const queue = groupCommit(writer.write, { maxPending: 100, maxBatch: 2 });
    const answers = [1, 2, 3].map((item) => queue.submit(item));
    await tick();
    writer.release();
    await tick();
    writer.release();
    assert.deepEqual(await Promise.all(answers), ['ok 1', 'ok 2', 'ok 3']);
    assert.deepEqual(writer.batches, [[1, 2], [3]]);
  });

  it('writes the items of a failed batch again one by one: only the bad one fails, and the next batch is written all the same', async () => {
    const batches: number[][] = [];
    const write = (items: number[]) => {
      batches.push(items);
      return items.includes(2) ? Promise.reject(new Error(`item 2 overflows`)) : Promise.resolve(items.map((item) => `ok ${item}`));
    };
    const queue = groupCommit(write, { maxPending: 100, maxBatch: 100 });
    const answers = [1, 2, 3].map((item) => queue.submit(item));
    await assert.rejects(answers[1] as Promise<string>, /item 2 overflows/);
    assert.equal(await answers[0], 'ok 1');
    assert.equal(await answers[2], 'ok 3');
    assert.deepEqual(batches, [[1, 2, 3], [1], [2], [3]]);
    assert.equal(await queue.submit(4), 'ok 4');
    assert.deepEqual(batches.at(-1), [4]);
    await queue.drained();
  });

  it('does not write a batch again item by item when the database cannot serve: every item fails with it, in one write', async () => {
    const batches: number[][] = [];
    const write = (items: number[]) => {
      batches.push(items);
      return Promise.reject(new DatabaseUnavailable('the database cannot be reached', 5));
    };
    const queue = groupCommit(write, { maxPending: 100, maxBatch: 100 });
    const answers = [1, 2, 3].map((item) => queue.submit(item));
    for (const answer of answers) await assert.rejects(answer, DatabaseUnavailable);
    assert.deepEqual(batches, [[1, 2, 3]]);
    await queue.drained();
  });

  it('refuses with 503 and Retry-After past maxPending waiting items, instead of growing', async () => {
    const writer = gatedWriter();
    const queue = groupCommit(writer.write, { maxPending: 2, maxBatch: 100 });
    const writing = queue.submit(1);
    await tick();
    const waiting = [queue.submit(2), queue.submit(3)];
    assert.equal(queue.pending, 2);
    assert.throws(() => queue.submit(4), (error: unknown) =>
      error instanceof ServiceUnavailable && error.reason === 'the write queue is full' && error.headers['Retry-After'] === '1');
    writer.release();
    await writing;
    await tick();
    writer.release();
    assert.deepEqual(await Promise.all(waiting), ['ok 2', 'ok 3']);
    assert.deepEqual(writer.batches, [[1], [2, 3]]);
  });
});

describe('rate limit', () => {
  it("lets a second's worth through per key, then 429 with Retry-After, refilling with time", () => {
    const time = testClock();
    const limit = rateLimit(time.clock, 3);
    for (let i = 0; i < 3; i++) limit('a');
    assert.throws(() => limit('a'), (error: unknown) => error instanceof TooManyRequests && error.headers['Retry-After'] === '1');
    limit('b');
    time.advance(0.34);
    limit('a');
    assert.throws(() => limit('a'), TooManyRequests);
  });

  it('forgets the key used longest ago past maxKeys', () => {
    const time = testClock();
    const limit = rateLimit(time.clock, 1, 2);
    limit('a');
    limit('b');
    limit('c'); // 'a' forgotten: a full bucket again
    limit('a');
    assert.throws(() => limit('c'), TooManyRequests);
  });
});
