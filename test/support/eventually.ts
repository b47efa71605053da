/**
 * Runs `check` until it passes, every `intervalMs`, and throws its last failure once `limitMs` have
 * passed (and `check` was tried at least 3 times, so a machine that stalls past the limit, a paused VM
 * or a loaded CI host, still gets a try or two after it wakes). For what another connection or process
 * learns of a change only after its own I/O (a notification, a file's change counter): the limit bounds
 * how long a test may wait, it is not a figure under test.
 *
 * Every `assert.ok` in a check carries a message: without one, a failing `assert.ok` has node:assert
 * read and parse the test's source to describe the expression, which takes seconds on a file tsx
 * compiled (and more on a loaded machine), so each try would cost that, and a wait of 3 s took minutes.
 * test/architecture.test.ts holds the tests to it.
 */
export async function eventually<T>(check: () => T | Promise<T>, limitMs = 3000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (let tries = 1; ; tries += 1) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline && tries >= 3) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
