/**
 * A share of each turn of the event loop for work that comes in bulk (a syslog sender's burst of
 * thousands of lines, a batch of them to judge): done a piece at a time, so that an HTTP request that
 * arrives meanwhile waits for one piece, not the whole burst (docs/log-sources.md#speed).
 *
 * A turn here runs from the first spend() to the next check phase (setImmediate): the work done in it is
 * bounded by `ms`, measured every `checkEvery` items (a clock read per item would cost more than the item).
 */
export class TurnBudget {
  #startedAt = -1;
  #items = 0;
  #spent = false;

  constructor(
    private readonly ms: number,
    private readonly checkEvery = 16,
  ) {}

  /** Counts one item done; true once this turn's share is used up, and until the next turn. */
  spend(): boolean {
    if (this.#startedAt < 0) {
      this.#startedAt = performance.now();
      setImmediate(() => {
        this.#startedAt = -1;
        this.#items = 0;
        this.#spent = false;
      });
    }
    if (this.#spent) return true;
    this.#items += 1;
    if (this.#items % this.checkEvery === 0 && performance.now() - this.#startedAt >= this.ms) this.#spent = true;
    return this.#spent;
  }

  /** Whether this turn's share is used up (without spending). */
  get spent(): boolean {
    return this.#spent;
  }
}

/** Resolves in the next turn of the event loop (after the I/O that waits: HTTP requests are answered first). */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
