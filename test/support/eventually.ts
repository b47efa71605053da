/**
 * Runs `check` until it passes, every `intervalMs`, and throws its last failure once `limitMs` have
 * passed and `check` has also been tried `limitMs / intervalMs` times. For what another connection or
 * process learns of a change only after its own I/O (a notification, a file's change counter): the
 * limit bounds how long a test may wait, it is not a figure under test. Counting tries as well as time
 * keeps a machine that stalls (a paused VM, a loaded CI host) from spending the whole limit at once.
 */
export async function eventually<T>(check: () => T | Promise<T>, limitMs = 3000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + limitMs;
  const leastTries = Math.ceil(limitMs / intervalMs);
  for (let tries = 1; ; tries += 1) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline && tries >= leastTries) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
