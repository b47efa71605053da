import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseChildTimes, parseDuration, parseWrk } from '../tools/bench/wrk.js';

// What tools/bench/wrk.ts reads from wrk (docs/benchmarks.md): a real `wrk -t1 -c4 -d1s --latency` printout.
const PRINTOUT = `Running 1s test @ http://127.0.0.1:3390/bad
  1 threads and 4 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   307.97us  787.71us  12.06ms   92.90%
    Req/Sec    33.98k    14.62k   45.80k    81.82%
  Latency Distribution
     50%  102.00us
     75%  146.00us
     90%  614.00us
     99%    3.72ms
  37085 requests in 1.10s, 5.06MB read
  Non-2xx or 3xx responses: 37085
Requests/sec:  33713.33
Transfer/sec:      4.60MB
`;

describe('reading wrk', () => {
  it('reads the rate, the answers, those of 400 or more, and the 50th and 99th latency percentiles in ms', () => {
    assert.deepEqual(parseWrk(PRINTOUT), { requestsPerSecond: 33713.33, requests: 37085, non2xx: 37085, p50: 0.102, p99: 3.72, socketErrors: '' });
  });

  it('reads socket errors, and no non-2xx line as none', () => {
    const printout = PRINTOUT.replace('  Non-2xx or 3xx responses: 37085\n', '  Socket errors: connect 0, read 3, write 0, timeout 12\n');
    assert.deepEqual(parseWrk(printout), { requestsPerSecond: 33713.33, requests: 37085, non2xx: 0, p50: 0.102, p99: 3.72, socketErrors: 'connect 0, read 3, write 0, timeout 12' });
  });

  it('reads every unit of a duration into milliseconds', () => {
    assert.deepEqual(['635.00us', '1.05ms', '2.01s', '1.50m'].map(parseDuration), [0.635, 1.05, 2010, 90_000]);
    assert.throws(() => parseDuration('1.05 ms'), /not a wrk duration/);
  });

  it('refuses a printout without a rate (wrk failed to connect)', () => {
    assert.throws(() => parseWrk('unable to connect to 127.0.0.1:9 Connection refused\n'), /wrk printed no rate/);
  });

  it("adds the user and system CPU of bash's times line for children", () => {
    assert.equal(parseChildTimes('1m2.500s 0m0.250s'), 62.75);
    assert.throws(() => parseChildTimes('0m0.001s'), /not a line of bash's times/);
  });
});
