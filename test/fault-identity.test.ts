import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runInThisContext } from 'node:vm';
import { faultCapture, knownFaults, reportOfFault } from '../src/tracker/fault-capture.js';
import type { ErrorReport } from '../src/tracker/infrastructure-error.js';

// A captured fault is recognised by where it was thrown without formatting its stack (docs/operations.md#faults-of-cmi);
// the error's stack must still read exactly as V8 would have written it, and its identity must not change.

const CONTEXT = { component: 'request', request_id: 'req-1', method: 'GET', route: '/version.json' };
const PROCESS = { host: 'test-host', version: '1.0' };
const AT = new Date('2026-11-20T10:00:00.000Z');

class DiskFull extends Error {
  override name = 'DiskFull';
}

/** `count` errors thrown from one place, each with the same frames. */
function thrownHere(count: number, message = 'no space left'): Error[] {
  const errors: Error[] = [];
  for (let i = 0; i < count; i++) errors.push(new DiskFull(message));
  return errors;
}

function thrownElsewhere(): Error {
  return new DiskFull('no space left');
}

describe('reportOfFault without source maps (as bin/cmi.js runs)', () => {
  // The tests run with source maps on (tools/shared/compiled-modules.mjs); production leaves them off.
  before(() => process.setSourceMapsEnabled(false));
  after(() => process.setSourceMapsEnabled(true));

  it("leaves the error's stack as V8 writes it, before and after its identity is known", () => {
    const [twin, first, second] = thrownHere(3) as [Error, Error, Error];
    const expected = twin.stack;
    assert.match(expected ?? '', /^DiskFull: no space left\n {4}at thrownHere \(/);
    const known = knownFaults();
    reportOfFault(first, CONTEXT, PROCESS, AT, known);
    reportOfFault(second, CONTEXT, PROCESS, AT, known);
    assert.equal(known.size, 1);
    // The repeat's stack was not formatted: it is still the accessor that formats it when read.
    assert.equal(typeof Object.getOwnPropertyDescriptor(second, 'stack')?.get, 'function');
    assert.equal(second.stack, expected, 'a repeat: formatted when read');
    assert.equal(first.stack, expected, 'the first: formatted to work its identity out');
    second.stack = 'replaced';
    assert.equal(second.stack, 'replaced');
  });

  it('gives a repeat the identity of the first, the same as with no memory at all; another place or message is another key', () => {
    // All four from one call, so their frames are the same ones.
    const [first, repeat, readBefore, toFreeze] = thrownHere(4) as [Error, Error, Error, Error];
    void readBefore.stack;
    const known = knownFaults();
    const a = reportOfFault(first, CONTEXT, PROCESS, AT, known);
    const b = reportOfFault(repeat, CONTEXT, PROCESS, AT, known);
    const c = reportOfFault(readBefore, CONTEXT, PROCESS, AT);
    const frozen = reportOfFault(Object.freeze(toFreeze), CONTEXT, PROCESS, AT);
    for (const report of [b, c, frozen]) {
      assert.deepEqual([report.fingerprint, report.error_class, report.message, report.backtrace], [a.fingerprint, a.error_class, a.message, a.backtrace]);
    }
    assert.match(a.backtrace, /^test\/fault-identity\.test\.ts:\d+:in 'thrownHere'$/m);

    reportOfFault(thrownElsewhere(), CONTEXT, PROCESS, AT, known);
    const other = reportOfFault(thrownHere(1, 'read-only file system')[0], CONTEXT, PROCESS, AT, known);
    assert.equal(known.size, 3);
    assert.equal(other.message, 'read-only file system');
    assert.equal(other.fingerprint, a.fingerprint, 'the message does not enter the fingerprint of an error with frames');
  });

  it('tells apart faults thrown at the same offsets of two different scripts', () => {
    // Two scripts alike but for their names: every frame of theirs has the same offset in each.
    const source = '(() => {\n  class DiskFull extends Error { name = "DiskFull"; }\n  return () => new DiskFull("no space left");\n})()';
    const fromA = runInThisContext(source, { filename: '/srv/cmi/dist/store/a.js' }) as () => Error;
    const fromB = runInThisContext(source, { filename: '/srv/cmi/dist/store/b.js' }) as () => Error;
    const known = knownFaults();
    // Thrown through one line here, so that the scripts' names are all that differs.
    const [a, b, again] = [fromA, fromB, fromB].map((make) => reportOfFault(make(), CONTEXT, PROCESS, AT, known)) as [ErrorReport, ErrorReport, ErrorReport];
    assert.equal(known.size, 2);
    assert.match(a.backtrace, /^\/srv\/cmi\/dist\/store\/a\.js:3:/);
    assert.match(b.backtrace, /^\/srv\/cmi\/dist\/store\/b\.js:3:/);
    assert.notEqual(a.fingerprint, b.fingerprint);
    assert.equal(again.fingerprint, b.fingerprint);
  });

  it('remembers at most as many places as it is told, then starts over', () => {
    const known = knownFaults(2);
    const [first, repeat] = thrownHere(2) as [Error, Error];
    reportOfFault(first, CONTEXT, PROCESS, AT, known);
    reportOfFault(thrownElsewhere(), CONTEXT, PROCESS, AT, known);
    assert.equal(known.size, 2);
    reportOfFault(thrownHere(1, 'read-only file system')[0], CONTEXT, PROCESS, AT, known);
    assert.equal(known.size, 1, 'the third place made it forget the first two');
    reportOfFault(repeat, CONTEXT, PROCESS, AT, known);
    assert.equal(known.size, 2, 'the first place is worked out again');
  });

  it('holds the repeats of one fault as one report: every one counted, the latest detail kept', async () => {
    const written: ErrorReport[][] = [];
    const times = ['2026-11-20T10:00:01.000Z', '2026-11-20T10:00:01.300Z', '2026-11-20T10:00:01.200Z'].map((at) => new Date(at));
    let now = 0;
    const faults = faultCapture((reports) => Promise.resolve(written.push(reports)), () => times[now++] ?? AT, PROCESS, { flushIntervalMs: 3_600_000, maxFingerprints: 1000 });
    const [first, second, late] = [thrownHere(1)[0], thrownHere(1, 'read-only file system')[0], thrownHere(1, 'quota exceeded')[0]] as [Error, Error, Error];
    const one = faults.capture(first, CONTEXT);
    const two = faults.capture(second, { component: 'retention', request_id: 'req-2' });
    // Captured after the second but stamped before it (a clock step back): counted, its detail not kept.
    const three = faults.capture(late, { ...CONTEXT, request_id: 'req-3' });
    assert.deepEqual([one.log, two.log, three.log], [true, false, false]);
    assert.equal(new Set([one.fingerprint, two.fingerprint, three.fingerprint]).size, 1);
    await faults.stop();
    const [batch, ...more] = written;
    assert.deepEqual(more, []);
    assert.deepEqual(batch?.map((report) => ({ ...report, backtrace: report.backtrace.split('\n')[0] })), [{
      fingerprint: one.fingerprint,
      error_class: 'DiskFull',
      message: 'read-only file system',
      backtrace: batch?.[0]?.backtrace.split('\n')[0],
      occurred_at: times[1],
      count: 3,
      host: 'test-host',
      component: 'retention',
      request_id: 'req-2',
      context: JSON.stringify({ pid: process.pid, version: '1.0' }),
    }]);
    assert.match(batch?.[0]?.backtrace ?? '', /^test\/fault-identity\.test\.ts:\d+:in 'thrownHere'$/m);
  });

  it('tells apart one place reached with receivers of other types (an inherited method on a Dog, then a Cat)', () => {
    class Animal {
      speak(): Error {
        return new DiskFull('no space left');
      }
    }
    class Dog extends Animal {}
    class Cat extends Animal {}
    const known = knownFaults();
    const [dog, cat, again] = [new Dog(), new Cat(), new Cat()].map((animal) => reportOfFault(animal.speak(), CONTEXT, PROCESS, AT, known)) as [ErrorReport, ErrorReport, ErrorReport];
    assert.equal(known.size, 2);
    assert.match(dog.backtrace, /^test\/fault-identity\.test\.ts:\d+:in 'Dog\.speak'$/m);
    assert.match(cat.backtrace, /^test\/fault-identity\.test\.ts:\d+:in 'Cat\.speak'$/m);
    assert.notEqual(dog.fingerprint, cat.fingerprint);
    assert.deepEqual([again.fingerprint, again.backtrace], [cat.fingerprint, cat.backtrace]);
  });

  it('holds a batch whose write failed once: again, and no longer in flight, from the moment it is held again', async () => {
    let fail = true;
    let seenAfterFailure: number[] = [];
    const written: ErrorReport[][] = [];
    const faults = faultCapture((reports) => {
      if (!fail) return Promise.resolve(written.push(reports));
      const failed = Promise.reject(new Error('disk full'));
      // Registered before the capture's own handler, this queues its look right after that handler has
      // run: what a process dying at that moment would spool (each report once).
      failed.catch(() => queueMicrotask(() => (seenAfterFailure = faults.pending().map((report) => report.count))));
      return failed;
    }, () => AT, PROCESS, { flushIntervalMs: 3_600_000, maxFingerprints: 1000 });
    faults.capture(thrownHere(1)[0], CONTEXT);
    faults.capture(thrownElsewhere(), CONTEXT);
    await faults.flush();
    assert.deepEqual(seenAfterFailure, [1, 1], 'each held once the moment the write failed');
    assert.deepEqual(faults.pending().map((report) => report.count), [1, 1]);
    fail = false;
    await faults.stop();
    assert.deepEqual(faults.pending(), []);
    assert.deepEqual(written.map((batch) => batch.length), [2]);
  });
});
