import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { Uuid } from '../util/uuid.ts';
import { parseTieredSegmentKey, tieredPartitionPrefix } from './keys.ts';
import { namedUploadIds, type TierRecords } from './tier-record.ts';

/** How often a leader sweeps each partition's tier prefix for orphans [T6]: a LIST and a record read each. */
export const TIER_SWEEP_INTERVAL_MS = 5 * 60_000;
/**
 * How long an object named by no tier record entry stays before it is deleted [T6]: longer than
 * any remote read that picked a segment just before retention removed it from the record [T7]
 * takes to read it (a fetch waits at most 30 s; chunks are read within that).
 */
export const TIER_ORPHAN_DELAY_MS = 10 * 60_000;
/**
 * Orphans remembered at once per sweeper; past it new sightings wait until room is made (a later
 * delete, never an early one). Evicting the oldest instead let sightings re-noted each sweep evict
 * the next ones before they came due: past the bound nothing was ever deleted again (review).
 */
const ORPHANS_REMEMBERED_MAX = 100_000;

/**
 * [T6] Deletes tiered objects no tier record entry names: uploads of leaders that died or were
 * deposed before their commit (TI3: an object is written only under an entry already in the
 * record, and an entry once dropped never comes back, upload ids being fresh), and segments
 * retention removed. An object is deleted once it was seen unnamed, and seen unnamed again at
 * least TIER_ORPHAN_DELAY_MS later on this broker's monotonic clock; each look lists the objects
 * first and reads the record after, so no entry announced before an object existed is missed.
 */
export class OrphanSweeper {
  readonly #store: ObjectStore;
  readonly #prefix: string;
  readonly #clock: Clock;
  readonly #delayMs: number;
  /** Object key -> when it was first seen unnamed. */
  readonly #firstSeenUnnamedMs = new Map<string, number>();

  constructor(options: { store: ObjectStore; prefix: string; clock: Clock; delayMs?: number }) {
    this.#store = options.store;
    this.#prefix = options.prefix;
    this.#clock = options.clock;
    this.#delayMs = options.delayMs ?? TIER_ORPHAN_DELAY_MS;
  }

  /** One look at one partition; returns the objects deleted. */
  async sweep(records: TierRecords, topicId: Uuid, partition: number): Promise<number> {
    const keys = await this.#listKeys(tieredPartitionPrefix(this.#prefix, topicId, partition));
    const named = namedUploadIds(await records.read(topicId, partition));
    const nowMs = this.#clock.monotonicMs();
    const due: string[] = [];
    for (const key of keys) {
      const uploadId = parseTieredSegmentKey(key)?.uploadId;
      if (uploadId === undefined || named.has(uploadId)) {
        this.#firstSeenUnnamedMs.delete(key);
        continue;
      }
      const firstMs = this.#firstSeenUnnamedMs.get(key);
      if (firstMs === undefined) this.#note(key, nowMs);
      else if (nowMs - firstMs >= this.#delayMs) due.push(key);
    }
    for (const key of due) {
      await this.#store.delete(key);
      this.#firstSeenUnnamedMs.delete(key);
    }
    return due.length;
  }

  /** What is remembered of sightings (for tests: bounded). */
  get remembered(): number {
    return this.#firstSeenUnnamedMs.size;
  }

  #note(key: string, nowMs: number): void {
    if (this.#firstSeenUnnamedMs.size >= ORPHANS_REMEMBERED_MAX) return; // seen again at a later sweep, once the due ones went
    this.#firstSeenUnnamedMs.set(key, nowMs);
  }

  async #listKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.#store.list(prefix, token === undefined ? {} : { token });
      for (const object of page.objects) keys.push(object.key);
      token = page.nextToken;
    } while (token !== undefined);
    return keys;
  }
}
