import { drawWeighted } from './weighted-draw.ts';
import type { SeededRandom } from '../util/random.ts';
import { CLOCK_DRIFT_FAULT_RATE_ERROR_MAX, CLOCK_RATE_ERROR_MAX } from './clock-rates.ts';
import type { SimEmbeddedHost } from './embedded-host.ts';
import { between, CORRUPT_READ_RATE, RESTART_DELAY_MS_MAX, RESTART_DELAY_MS_MIN, SKEW_MS_MAX, SPELL_MS_MAX, SPELL_MS_MIN } from './faults.ts';

/**
 * The faults of an embedded run (embedded-scenario.ts), as FAULT_KINDS are a broker run's, on the
 * one host: power losses most of all (the case the run is there for), clean restarts, and the
 * spells a lone process meets (the WAL store cut, a full disk, corrupt reads, a pause, its clocks).
 * Names are FAULT_KINDS' where the fault is the same. Besides these, drawn on a schedule, a power
 * loss follows some of WAL GC's deletes (POWER_LOSS_AFTER_GC, embedded-run.ts).
 */
export interface EmbeddedFaultKind {
  readonly name: string;
  /** Relative frequency among the kinds. */
  readonly weight: number;
  /** Does it and returns what undoes it, or null when it does not apply now (the process is down). */
  inject(host: SimEmbeddedHost, random: SeededRandom): { readonly heal: () => void; readonly lastsMs: number; readonly detail: string } | null;
}

/** The fault that follows a WAL object delete drawn for it (not on the schedule). */
export const POWER_LOSS_AFTER_GC = 'power-loss-after-gc';
/** How long a pause of the whole application lasts. */
const PAUSE_MS_MIN = 200;
const PAUSE_MS_MAX = 3_000;

function whenUp(host: SimEmbeddedHost, inject: () => ReturnType<EmbeddedFaultKind['inject']>): ReturnType<EmbeddedFaultKind['inject']> {
  return host.state === 'running' || host.state === 'starting' ? inject() : null;
}

/** A power loss of the host, and the restart `lastsMs` later. */
export function powerLoss(host: SimEmbeddedHost, random: SeededRandom, detail: string): ReturnType<EmbeddedFaultKind['inject']> {
  return whenUp(host, () => {
    host.crash();
    return { heal: () => host.start(), lastsMs: between(random, RESTART_DELAY_MS_MIN, RESTART_DELAY_MS_MAX), detail };
  });
}

export const EMBEDDED_FAULT_KINDS: readonly EmbeddedFaultKind[] = [
  { name: 'crash', weight: 6, inject: (host, random) => powerLoss(host, random, 'kill -9 + power loss') },
  {
    name: 'restart', // the application closes the engine and opens it again
    weight: 2,
    inject: (host, random) =>
      whenUp(host, () => {
        void host.stop();
        return { heal: () => host.start(), lastsMs: between(random, RESTART_DELAY_MS_MIN, RESTART_DELAY_MS_MAX), detail: 'close' };
      }),
  },
  {
    name: 'pause',
    weight: 1,
    inject: (host, random) => {
      if (host.state !== 'running') return null;
      host.pause();
      return { heal: () => host.resume(), lastsMs: between(random, PAUSE_MS_MIN, PAUSE_MS_MAX), detail: 'SIGSTOP' };
    },
  },
  {
    name: 'wal-store-partition',
    weight: 2,
    inject: (host, random) => {
      host.setStoreFaults({ walUnreachable: true });
      return { heal: () => host.setStoreFaults({ walUnreachable: false }), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: '' };
    },
  },
  {
    name: 'disk-full',
    weight: 1,
    inject: (host, random) => {
      const atBytes = host.disk.usedBytes;
      host.setDiskFull(true);
      return { heal: () => host.setDiskFull(false), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: `at ${atBytes} bytes` };
    },
  },
  {
    name: 'corrupt-reads',
    weight: 1,
    inject: (host, random) => {
      host.setStoreFaults({ corruptReadRate: CORRUPT_READ_RATE });
      return { heal: () => host.setStoreFaults({ corruptReadRate: 0 }), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX), detail: `rate ${CORRUPT_READ_RATE}` };
    },
  },
  {
    name: 'clock-skew',
    weight: 1,
    inject: (host, random) => {
      const skewMs = Math.round((random.next() * 2 - 1) * SKEW_MS_MAX);
      host.setSkew(skewMs);
      return { heal: () => host.setSkew(0), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX * 4), detail: `${skewMs} ms` };
    },
  },
  {
    name: 'clock-drift',
    weight: 1,
    inject: (host, random) => {
      const errorPpm = Math.round((CLOCK_RATE_ERROR_MAX + random.next() * (CLOCK_DRIFT_FAULT_RATE_ERROR_MAX - CLOCK_RATE_ERROR_MAX)) * 1e6);
      const rate = 1 + (random.next() < 0.5 ? -errorPpm : errorPpm) / 1e6;
      host.setClockRate(rate);
      return { heal: () => host.setClockRate(null), lastsMs: between(random, SPELL_MS_MIN, SPELL_MS_MAX * 4), detail: `${rate > 1 ? '+' : '-'}${errorPpm} ppm` };
    },
  },
];

/** Draws a kind by weight among those enabled (null: all); null when none is. */
export function drawEmbeddedFaultKind(random: SeededRandom, enabled: ReadonlySet<string> | null): EmbeddedFaultKind | null {
  return drawWeighted(
    random,
    EMBEDDED_FAULT_KINDS.filter((kind) => enabled === null || enabled.has(kind.name)),
  );
}
