import type { ManualClock } from '../../src/util/clock.ts';
import { settle } from './settle.ts';

/** Lets manual time pass, `stepMs` at a time, until `promise` settles (the engine's timers fire as it goes); its outcome. */
export async function passUntilSettled<T>(clock: ManualClock, promise: Promise<T>, stepMs = 1): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  while (!settled) {
    clock.advance(stepMs);
    await settle();
  }
  return promise;
}
