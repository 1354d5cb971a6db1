import type { SeededRandom } from '../util/random.ts';

/**
 * Sequential writes in the simulated WAL store (ObjectStore.openSequentialWrite, the file store's
 * way of streaming an object): in a share of runs each broker's (or the embedded engine's) view of
 * the WAL store offers them (store.ts, sequential-write.ts), so StreamingUpload appends through
 * them, under the store's faults, instead of putting small objects whole. The tier streams every
 * segment object through StreamingUpload; the WAL writer streams an object that grows past its
 * multipartPartBytes (8 MiB in production, never reached in a run), so such a run lowers that to
 * a few KiB and its larger WAL objects stream too, with the writer's fallback to a plain PUT when
 * a stream fails. Drawn from the run's own stream (run.ts salts it), so that a run without them
 * draws everything else as before.
 */
export interface SequentialWriteScenario {
  /** The WAL writer's multipartPartBytes in the run: an object that grows past this streams while it fills. */
  readonly walStreamBytes: number;
  /** How often a finish's answer is lost, the publish having reached the store or not; the view judges it by reading back, as a conditional put's. */
  readonly lostFinishRate: number;
}

/** The share of runs whose WAL store view offers sequential writes. */
export const SEQUENTIAL_WRITE_SHARE = 0.3;
/**
 * WAL objects larger than this stream: the runs' objects are some hundreds of bytes to a few tens
 * of KiB (padded batches near max.message.bytes), so these stream a share of them, not all.
 */
const WAL_STREAM_BYTES = [1024, 4 * 1024, 16 * 1024];
/** None in a third of the runs, so the background faults alone are seen too (as CONTROL_AMBIGUOUS_RATES in run.ts). */
const LOST_FINISH_RATES = [0, 0.05, 0.25];

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

/** Whether the run's WAL store offers sequential writes, and how (null: it does not, as before). */
export function drawSequentialWrites(random: SeededRandom): SequentialWriteScenario | null {
  if (random.next() >= SEQUENTIAL_WRITE_SHARE) return null;
  return { walStreamBytes: pick(random, WAL_STREAM_BYTES), lostFinishRate: pick(random, LOST_FINISH_RATES) };
}

export function describeSequentialWrites(scenario: SequentialWriteScenario | null): string {
  if (scenario === null) return '';
  const lost = scenario.lostFinishRate === 0 ? '' : `, ${scenario.lostFinishRate * 100}% of finish answers lost`;
  return `; sequential writes (WAL objects stream from ${scenario.walStreamBytes} bytes${lost})`;
}

/** What a run's sequential writes did (`--seed` prints it, a range sums it). */
export interface SequentialWriteStats {
  /** Sequential writes opened (their open answered). */
  readonly opened: number;
  /** Append requests sent. */
  readonly appends: number;
  /** Finishes answered success, by what the object is: a tiered segment, a WAL object. */
  readonly tierObjects: number;
  readonly walObjects: number;
  /** Appends and finishes that failed (a fault, an unreachable store, a failed condition). */
  readonly failed: number;
}

export const NO_SEQUENTIAL_WRITES: SequentialWriteStats = { opened: 0, appends: 0, tierObjects: 0, walObjects: 0, failed: 0 };

/** Tiered segment objects live under this prefix of the WAL store (src/tier/keys.ts, no store prefix in the simulation). */
const TIER_KEY_PREFIX = 'tier/';
/** WAL objects, likewise (src/wal/keys.ts). */
const WAL_KEY_PREFIX = 'wal/';

/** A run's sequential writes: the WAL writers' stream threshold, the lost-answer rate every view applies, and the counts of what they did. */
export class SequentialWrites {
  readonly walStreamBytes: number;
  readonly lostFinishRate: number;
  #stats: SequentialWriteStats = NO_SEQUENTIAL_WRITES;

  constructor(scenario: SequentialWriteScenario) {
    this.walStreamBytes = scenario.walStreamBytes;
    this.lostFinishRate = scenario.lostFinishRate;
  }

  get stats(): SequentialWriteStats {
    return this.#stats;
  }

  opened(): void {
    this.#stats = { ...this.#stats, opened: this.#stats.opened + 1 };
  }

  appended(): void {
    this.#stats = { ...this.#stats, appends: this.#stats.appends + 1 };
  }

  finished(key: string): void {
    const { tierObjects, walObjects } = this.#stats;
    this.#stats = { ...this.#stats, tierObjects: tierObjects + (key.startsWith(TIER_KEY_PREFIX) ? 1 : 0), walObjects: walObjects + (key.startsWith(WAL_KEY_PREFIX) ? 1 : 0) };
  }

  failed(): void {
    this.#stats = { ...this.#stats, failed: this.#stats.failed + 1 };
  }
}

export function sumSequentialWrites(a: SequentialWriteStats, b: SequentialWriteStats): SequentialWriteStats {
  return { opened: a.opened + b.opened, appends: a.appends + b.appends, tierObjects: a.tierObjects + b.tierObjects, walObjects: a.walObjects + b.walObjects, failed: a.failed + b.failed };
}

export function describeSequentialWriteStats(stats: SequentialWriteStats): string {
  return `sequential writes: ${stats.opened} opened, ${stats.appends} appends, ${stats.tierObjects} tier objects and ${stats.walObjects} WAL objects finished, ${stats.failed} appends or finishes failed`;
}
