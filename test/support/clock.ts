import type { Clock } from '../../src/shared/clock.js';

/** A clock tests move by hand. */
export interface TestClock {
  clock: Clock;
  set(iso: string): void;
  advance(seconds: number): void;
}

export function testClock(start = '2026-11-20T10:00:00.000Z'): TestClock {
  let now = new Date(start).getTime();
  return {
    clock: () => new Date(now),
    set: (iso) => {
      now = new Date(iso).getTime();
    },
    advance: (seconds) => {
      now += seconds * 1000;
    },
  };
}
