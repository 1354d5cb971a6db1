import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import { parseWalObjectKey, walRoot } from '../wal/keys.ts';
import { WAL_ORPHAN_DELAY_MS } from './above-seal.ts';

/**
 * How often the whole WAL root is listed to find writer ids no live broker writes as ([G1]). A
 * LIST page is 1000 keys and GC keeps the WAL to a few objects per writer beyond TE, so a scan
 * is a page or two; once a minute is well inside the orphan delay.
 */
export const WAL_ORPHAN_SCAN_INTERVAL_MS = 60_000;

/** What the cluster knows of its writers (its scan's view: who collects is not what keeps GC safe, GI1 is). */
export interface WriterLiveness {
  /** The writer ids of brokers holding a live lease now. */
  liveWriterIds(): ReadonlySet<string>;
  /** Whether this broker is the live broker the group-coordinator hash picks for `writerId`. */
  picks(writerId: string): boolean;
}

export interface OrphanWritersOptions {
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly liveness: WriterLiveness;
  readonly clock: Clock;
  /** Default WAL_ORPHAN_DELAY_MS. */
  readonly delayMs?: number;
  /** Default WAL_ORPHAN_SCAN_INTERVAL_MS. */
  readonly scanIntervalMs?: number;
}

/**
 * [G1] Writer ids whose broker record is gone or dead: once seen so for WAL_ORPHAN_DELAY_MS on
 * this broker's monotonic clock (a broker restarting under its node id writes as it again, and
 * collects its own streams), the one broker the hash picks collects their streams.
 */
export class OrphanWriters {
  readonly #options: OrphanWritersOptions;
  /** Writer ids seen without a live broker, since when (monotonic ms). */
  readonly #orphanedSinceMs = new Map<string, number>();
  #scannedAtMs: number | null = null;
  #due: string[] = [];

  constructor(options: OrphanWritersOptions) {
    this.#options = options;
  }

  /** The orphaned writer ids this broker should collect now (the WAL root is listed at most every scan interval). */
  async due(): Promise<string[]> {
    const nowMs = this.#options.clock.monotonicMs();
    if (this.#scannedAtMs === null || nowMs - this.#scannedAtMs >= (this.#options.scanIntervalMs ?? WAL_ORPHAN_SCAN_INTERVAL_MS)) {
      this.#due = this.#judge(await this.#writerIds(), nowMs);
      this.#scannedAtMs = nowMs;
    }
    return this.#due.filter((writerId) => this.#options.liveness.picks(writerId) && !this.#options.liveness.liveWriterIds().has(writerId));
  }

  #judge(writerIds: ReadonlySet<string>, nowMs: number): string[] {
    const live = this.#options.liveness.liveWriterIds();
    for (const writerId of this.#orphanedSinceMs.keys()) if (live.has(writerId) || !writerIds.has(writerId)) this.#orphanedSinceMs.delete(writerId);
    const due: string[] = [];
    for (const writerId of writerIds) {
      if (live.has(writerId)) continue;
      const since = this.#orphanedSinceMs.get(writerId) ?? nowMs;
      this.#orphanedSinceMs.set(writerId, since);
      if (nowMs - since >= (this.#options.delayMs ?? WAL_ORPHAN_DELAY_MS)) due.push(writerId);
    }
    return due.sort();
  }

  async #writerIds(): Promise<Set<string>> {
    const { store, prefix } = this.#options;
    const writerIds = new Set<string>();
    let token: string | undefined;
    do {
      const page = await store.list(walRoot(prefix), token === undefined ? {} : { token });
      for (const object of page.objects) {
        const parsed = parseWalObjectKey(prefix, object.key);
        if (parsed !== null) writerIds.add(parsed.stream.writerId);
      }
      token = page.nextToken;
    } while (token !== undefined);
    return writerIds;
  }
}
