import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { reportOfFault } from '../src/domain/fault-capture.js';

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
  // tsx turns source maps on for the tests; production leaves them off.
  before(() => process.setSourceMapsEnabled(false));
  after(() => process.setSourceMapsEnabled(true));

  it("leaves the error's stack as V8 writes it, before and after its identity is known", () => {
    const [twin, first, second] = thrownHere(3) as [Error, Error, Error];
    const expected = twin.stack;
    assert.match(expected ?? '', /^DiskFull: no space left\n {4}at thrownHere \(/);
    const known = new Map();
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
    const [first, repeat, readBefore] = thrownHere(3) as [Error, Error, Error];
    void readBefore.stack;
    const known = new Map();
    const a = reportOfFault(first, CONTEXT, PROCESS, AT, known);
    const b = reportOfFault(repeat, CONTEXT, PROCESS, AT, known);
    const c = reportOfFault(readBefore, CONTEXT, PROCESS, AT);
    const frozen = reportOfFault(Object.freeze(thrownHere(1)[0] as Error), CONTEXT, PROCESS, AT);
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
});
