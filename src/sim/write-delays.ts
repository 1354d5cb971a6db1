import { LEASE_SAFETY_MARGIN_FRACTION } from '../cluster/lease.ts';
import type { SeededRandom } from '../util/random.ts';
import type { WriteDelay, WriteDelays } from './store.ts';

/**
 * A slow control-store path (the slow-control-writes fault): each write's extra time is drawn
 * between these shares of the lease, so a renewal's answer takes a large part of it (from
 * one that leaves most of the lease to one that outlasts it).
 */
const SLOW_WRITE_LEASE_SHARE_MIN = 0.2;
const SLOW_WRITE_LEASE_SHARE_MAX = 1.0;
/**
 * At most this share of a slow write's extra time is on the way to the store; the rest holds up
 * its answer, so the store has taken the write long before its writer hears of it.
 */
const SLOW_WRITE_OUTBOUND_SHARE_MAX = 0.5;
/** A renewal aimed at a lease's end lands (or is answered) within this share of the lease either side of it. */
const LEASE_EDGE_SHARE = 0.03;
/** Broker records, which hold the leases (docs/cluster-protocol.md [C1]). */
const BROKER_RECORD_KEY = /^control\/brokers\/\d+$/;

/** The longest extra time a write of either policy below takes, in leases: how long writes sent before a heal may still be held up. */
export const WRITE_DELAY_LEASES_MAX = 1 + LEASE_EDGE_SHARE;

/** Every control-record write is slow: drawn from `random` (the fault's own stream) per write. */
export function slowControlWrites(leaseMs: number, random: SeededRandom): WriteDelays {
  return () => {
    const totalMs = leaseMs * (SLOW_WRITE_LEASE_SHARE_MIN + random.next() * (SLOW_WRITE_LEASE_SHARE_MAX - SLOW_WRITE_LEASE_SHARE_MIN));
    const toStoreMs = totalMs * random.next() * SLOW_WRITE_OUTBOUND_SHARE_MAX;
    return { toStoreMs, backMs: totalMs - toStoreMs };
  };
}

/**
 * Renewals just before and just after a lease's end: each write of a broker record (after the
 * first this fault sees) is held up so that either
 * - it reaches the store within LEASE_EDGE_SHARE of a lease after the previous one did, where
 *   the others count the broker dead if they saw nothing newer ([C1] others); or
 * - its answer comes back within LEASE_EDGE_SHARE of the self-fencing share of a lease after the
 *   previous one was sent, where the broker stops acknowledging unless it heard back ([C1] itself).
 * An edge already past when the renewal is sent leaves it alone.
 */
export function renewalsAtLeaseEdge(leaseMs: number, random: SeededRandom): WriteDelays {
  let previous: { sentMs: number; landsMs: number } | null = null;
  return (key, nowMs) => {
    if (!BROKER_RECORD_KEY.test(key)) return null;
    const delay = previous === null ? null : edgeDelay(previous, leaseMs, nowMs, random);
    previous = { sentMs: nowMs, landsMs: nowMs + (delay?.toStoreMs ?? 0) };
    return delay;
  };
}

function edgeDelay(previous: { sentMs: number; landsMs: number }, leaseMs: number, nowMs: number, random: SeededRandom): WriteDelay | null {
  const offsetMs = (random.next() * 2 - 1) * LEASE_EDGE_SHARE * leaseMs;
  if (random.next() < 0.5) {
    const toStoreMs = previous.landsMs + leaseMs + offsetMs - nowMs;
    return toStoreMs > 0 ? { toStoreMs, backMs: 0 } : null;
  }
  const backMs = previous.sentMs + leaseMs * (1 - LEASE_SAFETY_MARGIN_FRACTION) + offsetMs - nowMs;
  return backMs > 0 ? { toStoreMs: 0, backMs } : null;
}
