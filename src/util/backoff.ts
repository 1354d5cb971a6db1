import type { Clock } from './clock.ts';
import type { Random } from './random.ts';

export interface BackoffPolicy {
  /** Attempts in all, the first included. */
  readonly attempts: number;
  readonly baseMs: number;
  readonly capMs: number;
}

/** "Full jitter": uniform in [0, min(cap, base * 2^attempt)), so retrying clients spread out. */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: Random): number {
  return random.next() * Math.min(policy.capMs, policy.baseMs * 2 ** attempt);
}

export function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(delayMs, resolve));
}
