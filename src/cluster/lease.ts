import type { Clock } from '../util/clock.ts';
import { regressed } from '../util/regressions.ts';

/**
 * Stop acknowledging this share of the lease before it could end in anyone's eyes: room for
 * clock-rate differences and for an acknowledgement already on its way out. Costs: a broker whose
 * renewals stall stops acknowledging leaseMs / 5 sooner than it must. With renewals every
 * leaseMs / 3, one slow or failed renewal never closes the gate.
 */
export const LEASE_SAFETY_MARGIN_FRACTION = 0.2;

/**
 * This broker's own lease as it can be sure of it (docs/cluster-protocol.md [C1]): others see a
 * renewal no sooner than it started, and count the broker dead only once `leaseMs` passed on
 * their clocks without a newer one. So it is held from the start of the last successful renewal
 * until `leaseMs` minus a safety margin later, on this process's monotonic clock, never by
 * comparing wall clocks. Once it lapsed it stays lapsed until a renewal succeeds again and the
 * caller has checked which partitions are still its own (`confirm`).
 */
export class Lease {
  readonly leaseMs: number;
  readonly #clock: Clock;
  /** Monotonic start of the last successful renewal; null before the first. */
  #renewalStartedMs: number | null = null;
  /** A renewal came after a lapse (or was the first): held again only after `confirm`. */
  #unconfirmed = false;
  /** Counts lapses, so a confirmation begun before a later lapse does not end it. */
  #lapses = 0;

  constructor(leaseMs: number, clock: Clock) {
    this.leaseMs = leaseMs;
    this.#clock = clock;
  }

  /** The monotonic time a renewal starts: pass it to `renewed` once the write succeeded. */
  renewalStarting(): number {
    return this.#clock.monotonicMs();
  }

  /**
   * A renewal that started at `startedMs` succeeded (now). Others may see the new record as late
   * as now, so if the lease had lapsed by now (or this is the first renewal), others may have
   * counted this broker dead meanwhile: it is held again only after `confirm`.
   */
  renewed(startedMs: number): void {
    const previous = this.#renewalStartedMs;
    if (previous === null || this.#clock.monotonicMs() - previous >= this.#heldMs) {
      this.#unconfirmed = true;
      this.#lapses++;
    }
    const from = regressed('lease-from-answer') ? this.#clock.monotonicMs() : startedMs;
    this.#renewalStartedMs = Math.max(previous ?? from, from);
  }

  /**
   * [C1] Others may take this broker's partitions over from now although its lease holds (its record
   * is about to say storageFailing): it stops acknowledging and serving reads as leader at once, and
   * does again only after a renewal and `confirm`, as after a lapse.
   */
  yieldToOthers(): void {
    this.#unconfirmed = true;
    this.#lapses++;
  }

  /** The lapse a confirmation starting now would end (pass it to `confirm`). */
  get lapse(): number {
    return this.#lapses;
  }

  /**
   * After a lapse and a successful renewal: the caller re-read its partitions (having started
   * when `lapse` was `lapse`), so the lease serves again, unless it lapsed once more meanwhile.
   */
  confirm(lapse: number): void {
    if (lapse === this.#lapses) this.#unconfirmed = false;
  }

  /** Renewed in time, whether or not a lapse before still waits for `confirm`: others count this broker alive. */
  renewedInTime(): boolean {
    return this.#renewalStartedMs !== null && this.stillHolds(this.#renewalStartedMs);
  }

  /** Whether something this broker saw at `startedMs` (monotonic) is still within the held share of a lease. */
  stillHolds(startedMs: number): boolean {
    return this.#clock.monotonicMs() - startedMs < this.#heldMs;
  }

  /** Renewed after a lapse, waiting for `confirm`. */
  get awaitingConfirmation(): boolean {
    return this.#unconfirmed && this.renewedInTime();
  }

  /** Whether this broker may acknowledge now. */
  held(): boolean {
    return !this.#unconfirmed && this.renewedInTime();
  }

  get #heldMs(): number {
    return this.leaseMs * (1 - LEASE_SAFETY_MARGIN_FRACTION);
  }
}
