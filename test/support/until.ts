// Waiting on wall-clock time for something a real process, socket or store does: bounded, and
// never a timing assertion (these machines are shared and noisy). Code on an injected clock uses
// settle.ts instead.

/** How long a condition may take before the test fails with what it waited for. */
const UNTIL_TIMEOUT_MS_DEFAULT = 30_000;
/** How often the condition is polled. */
const UNTIL_POLL_MS = 5;

/** Resolves once `condition` holds; throws naming `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = UNTIL_TIMEOUT_MS_DEFAULT): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(UNTIL_POLL_MS);
  }
}
