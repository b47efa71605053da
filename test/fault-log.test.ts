import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { faultLogLimiter } from '../src/shared/faults.js';
import { buildApp } from '../src/app/app.js';
import { createTestApp, type TestApp } from './support/app.js';
import { testClock } from './support/clock.js';
import { validateResponses } from './support/response-validation.js';

type Line = Record<string, unknown>;

// A storm of one fault logs one line a second with a count; every occurrence is still recorded
// (docs/operations.md#log-storms).
describe('a storm of one fault', () => {
  let t: TestApp;
  let app: FastifyInstance;
  const lines: Line[] = [];
  before(async () => {
    t = await createTestApp();
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Line);
        done();
      },
    });
    app = await buildApp({ config: t.config, database: t.database, clock: t.time.clock, extend: validateResponses(), logger: { level: 'debug', stream } });
    // A real fault: a row the code cannot render (an unparseable timestamp) makes formatDatetime throw.
    await t.database.db.updateTable('users').set({ created_at: 'not a date' }).where('login', '=', 'alice').execute();
  });
  after(async () => {
    await app.close();
    await t.close();
  });

  const storm = async (format: 'json' | 'xml', times: number) => {
    const answers = await Promise.all(Array.from({ length: times }, () => app.inject({ url: `/users.${format}`, headers: { authorization: t.adminAuth } })));
    for (const res of answers) assert.equal(res.statusCode, 500);
  };
  const faultLines = () => lines.filter((line) => line.msg === 'fault');
  const counters = async () => {
    await app.faults.flush();
    return (await t.database.db.selectFrom('infrastructure_errors').select('counter').orderBy('id').execute()).map((row) => row.counter);
  };

  it('is logged once within a second, with its stack and fingerprint, however often it happens', async () => {
    await storm('json', 20);
    t.time.advance(0.999);
    await storm('json', 5);
    const [line, ...others] = faultLines();
    assert.equal(others.length, 0, JSON.stringify(others));
    assert.equal(line?.level, 50);
    assert.equal(line.code, 'CMI_ERR_INTERNAL');
    assert.match(String((line.err as { stack?: string }).stack), /formatDatetime/);
    assert.match(String(line.fingerprint), /^[0-9a-f]{64}$/);
    assert.equal(line.repeated, undefined);
  });

  it('every occurrence is recorded all the same', async () => {
    assert.deepEqual(await counters(), [25]);
  });

  it('a second later the next line says how many went unlogged', async () => {
    t.time.advance(0.001);
    await storm('json', 3);
    const [first, second, ...others] = faultLines();
    assert.equal(others.length, 0);
    assert.equal(second?.repeated, 24);
    assert.equal(second.fingerprint, first?.fingerprint);
    assert.deepEqual(await counters(), [28]);
  });

  it('another fault (another fingerprint) has its own line', async () => {
    await storm('xml', 4);
    const xml = faultLines().slice(2);
    assert.equal(xml.length, 1);
    assert.notEqual(xml[0]?.fingerprint, faultLines()[0]?.fingerprint);
    assert.deepEqual(await counters(), [28, 4]);
  });
});

describe('faultLogLimiter', () => {
  it('remembers a bounded number of fingerprints, forgetting the one logged longest ago', () => {
    const time = testClock();
    const mayLog = faultLogLimiter(time.clock, { intervalMs: 1000, fingerprints: 2 });
    assert.deepEqual(['a', 'b', 'a', 'c'].map((f) => mayLog(f).log), [true, true, false, true]);
    // 'a' was forgotten to make room for 'c'; 'b' and 'c' are remembered.
    assert.deepEqual(['b', 'c', 'a'].map((f) => mayLog(f).log), [false, false, true]);
    time.advance(1);
    assert.deepEqual(mayLog('c'), { log: true, repeated: 1 });
  });
});
