/**
 * Runs `check` until it passes, every `intervalMs`, and throws its last failure once `limitMs` have
 * passed. For what another connection or process learns of a change only after its own I/O (a
 * notification, a file's change counter): the limit bounds how long a test may wait, it is not a
 * figure under test.
 */
export async function eventually<T>(check: () => T | Promise<T>, limitMs = 3000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
