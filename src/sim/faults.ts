import { drawWeighted } from './weighted-draw.ts';
import { SeededRandom } from '../util/random.ts';
import type { SimBrokerHost } from './broker-process.ts';
import { CLOCK_DRIFT_FAULT_RATE_ERROR_MAX, CLOCK_RATE_ERROR_MAX } from './clock-rates.ts';
import type { FaultEvent } from './history.ts';
import type { WriteDelays } from './store.ts';
import { renewalsAtLeaseEdge, slowControlWrites, WRITE_DELAY_LEASES_MAX } from './write-delays.ts';

/**
 * The faults a run injects, each a named kind with how to inject it and how long it lasts. A
 * fault is injected on one broker host, lasts a drawn time and then heals (a restart, a resume,
 * a reconnection). To add a fault: a kind here, its `inject` (which returns the heal), and the
 * cluster shapes it applies to (`clusterOnly`: the control store's own faults, which a lone broker,
 * whose control records live in the WAL store, has no separate store for). Faults overlap freely: combinations come from the schedule.
 */
export interface FaultKind {
  readonly name: string;
  /** Relative frequency among the kinds. */
  readonly weight: number;
  readonly clusterOnly?: boolean;
  /** Does it and returns what undoes it, or null when it does not apply now (e.g. the host is down). */
  inject(target: FaultTarget, random: SeededRandom): { readonly heal: () => void; readonly lastsMs: number; readonly detail: string } | null;
}

export interface FaultTarget {
  readonly host: SimBrokerHost;
  readonly hosts: readonly SimBrokerHost[];
  readonly leaseMs: number;
}

/** Between a crash and the restart. */
export const RESTART_DELAY_MS_MIN = 200;
export const RESTART_DELAY_MS_MAX = 4_000;
/** A wall-clock step, either way: up to an hour. */
export const SKEW_MS_MAX = 3_600_000;
/** How long a store or network partition, a full disk or a spell of corrupt reads lasts. */
export const SPELL_MS_MIN = 200;
export const SPELL_MS_MAX = 8_000;
/** A GET corrupted on the path, while a spell of them lasts. */
export const CORRUPT_READ_RATE = 0.2;

export function between(random: SeededRandom, min: number, max: number): number {
  return min + random.next() * (max - min);
}

/** A stream of its own for a fault's per-write draws, so they shift no other fault's. */
function ownStream(random: SeededRandom): SeededRandom {
  return new SeededRandom(random.nextInt(0x1_0000_0000));
}

/** Holds up this host's control-record writes as `delays` draws, for a spell. */
function delayControlWrites(host: SimBrokerHost, leaseMs: number, delays: WriteDelays, random: SeededRandom): ReturnType<FaultKind['inject']> {
  host.setControlWriteDelays(delays);
  return { heal: () => host.setControlWriteDelays(null, WRITE_DELAY_LEASES_MAX * leaseMs), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: '' };
}

function whenUp(host: SimBrokerHost, inject: () => ReturnType<FaultKind['inject']>): ReturnType<FaultKind['inject']> {
  return host.state === 'running' || host.state === 'starting' ? inject() : null;
}

export const FAULT_KINDS: readonly FaultKind[] = [
  {
    name: 'crash', // kill -9 with a power loss: unsynced bytes are gone, the last write may be torn
    weight: 4,
    inject: ({ host }, random) =>
      whenUp(host, () => {
        host.crash();
        return { heal: () => host.start(), lastsMs: between(random, RESTART_DELAY_MS_MIN, RESTART_DELAY_MS_MAX), detail: 'kill -9 + power loss' };
      }),
  },
  {
    name: 'restart', // SIGTERM: a clean stop, then a start
    weight: 2,
    inject: ({ host }, random) =>
      whenUp(host, () => {
        void host.stop();
        return { heal: () => host.start(), lastsMs: between(random, RESTART_DELAY_MS_MIN, RESTART_DELAY_MS_MAX), detail: 'SIGTERM' };
      }),
  },
  {
    name: 'disk-lost', // the instance is replaced: a new empty disk (RF=1 data lives in the object store; a lone broker's too, issue 24)
    weight: 1,
    inject: ({ host }, random) =>
      whenUp(host, () => {
        host.wipe();
        return { heal: () => host.start(), lastsMs: between(random, RESTART_DELAY_MS_MIN, RESTART_DELAY_MS_MAX), detail: 'disk replaced' };
      }),
  },
  {
    name: 'pause', // SIGSTOP past the lease, then SIGCONT: a zombie leader wakes up
    weight: 3,
    inject: ({ host, leaseMs }, random) => {
      if (host.state !== 'running') return null;
      host.pause();
      return { heal: () => host.resume(), lastsMs: between(random, leaseMs * 0.5, leaseMs * 3), detail: 'SIGSTOP' };
    },
  },
  {
    name: 'clock-skew',
    weight: 1,
    inject: ({ host }, random) => {
      const skewMs = Math.round((random.next() * 2 - 1) * SKEW_MS_MAX);
      host.setSkew(skewMs);
      return { heal: () => host.setSkew(0), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX * 4), detail: `${skewMs} ms` };
    },
  },
  {
    name: 'clock-drift', // the monotonic clock (and so every timer) runs fast or slow, far past a crystal's tolerance
    weight: 1,
    inject: ({ host }, random) => {
      const errorPpm = Math.round((CLOCK_RATE_ERROR_MAX + random.next() * (CLOCK_DRIFT_FAULT_RATE_ERROR_MAX - CLOCK_RATE_ERROR_MAX)) * 1e6);
      const rate = 1 + (random.next() < 0.5 ? -errorPpm : errorPpm) / 1e6;
      host.setClockRate(rate);
      return { heal: () => host.setClockRate(null), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX * 4), detail: `${rate > 1 ? '+' : '-'}${errorPpm} ppm` };
    },
  },
  {
    name: 'slow-control-writes', // writes of control records (renewals, claims) take up to a lease, mostly on the answer's way back
    weight: 2,
    inject: ({ host, leaseMs }, random) => delayControlWrites(host, leaseMs, slowControlWrites(leaseMs, ownStream(random)), random),
  },
  {
    name: 'renewal-at-lease-edge', // renewals land just before or after others would count the lease out, or are answered as the broker's own share of it ends
    weight: 2,
    inject: ({ host, leaseMs }, random) => delayControlWrites(host, leaseMs, renewalsAtLeaseEdge(leaseMs, ownStream(random)), random),
  },
  {
    name: 'control-store-partition',
    weight: 2,
    clusterOnly: true,
    inject: ({ host }, random) => {
      host.setStoreFaults({ controlUnreachable: true });
      return { heal: () => host.setStoreFaults({ controlUnreachable: false }), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: '' };
    },
  },
  {
    name: 'control-store-outage', // the control store is down for every broker at once; the WAL store is not
    weight: 1,
    clusterOnly: true,
    inject: ({ hosts }, random) => {
      for (const each of hosts) each.setStoreFaults({ controlUnreachable: true });
      return { heal: () => hosts.forEach((each) => each.setStoreFaults({ controlUnreachable: false })), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: 'all brokers' };
    },
  },
  {
    name: 'wal-store-partition',
    weight: 2,
    inject: ({ host }, random) => {
      host.setStoreFaults({ walUnreachable: true });
      return { heal: () => host.setStoreFaults({ walUnreachable: false }), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: '' };
    },
  },
  {
    name: 'network-partition', // cut from every other host, clients included
    weight: 2,
    inject: ({ host }, random) => {
      host.setIsolated(true);
      return { heal: () => host.setIsolated(false), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: '' };
    },
  },
  {
    name: 'disk-full',
    weight: 1,
    inject: ({ host }, random) => {
      const atBytes = host.disk.usedBytes;
      host.setDiskFull(true);
      return { heal: () => host.setDiskFull(false), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: `at ${atBytes} bytes` };
    },
  },
  {
    name: 'corrupt-reads', // GETs of this host answer objects with a flipped byte
    weight: 1,
    inject: ({ host }, random) => {
      host.setStoreFaults({ corruptReadRate: CORRUPT_READ_RATE });
      return { heal: () => host.setStoreFaults({ corruptReadRate: 0 }), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: `rate ${CORRUPT_READ_RATE}` };
    },
  },
];

/** Draws a fault kind by weight among those that apply to this shape of cluster; null when none does. */
export function drawFaultKind(random: SeededRandom, cluster: boolean, enabled: ReadonlySet<string> | null): FaultKind | null {
  return drawWeighted(
    random,
    FAULT_KINDS.filter((kind) => (cluster || kind.clusterOnly !== true) && (enabled === null || enabled.has(kind.name))),
  );
}

/** A fault in force, and when it heals. */
export interface ActiveFault {
  readonly kind: string;
  readonly host: string;
  readonly heal: () => void;
}

export function faultEvent(atMs: number, fault: string, target: string): FaultEvent {
  return { kind: 'fault', atMs, fault, target };
}
