import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { assert } from '../util/assert.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';

export const LEADER_EPOCH_CHECKPOINT_FILE = 'leader-epoch-checkpoint';
/** Kafka's checkpoint file format: a version line, a count line, then "epoch startOffset" lines. */
const CHECKPOINT_FORMAT_VERSION = 0;

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

/**
 * Which leader epoch wrote which offsets (Kafka's LeaderEpochFileCache). Recovery checks every
 * batch's partitionLeaderEpoch against it: that field lies outside the batch CRC, so without
 * this check a flipped bit there would go unnoticed. Invariant: epochs and start offsets both
 * strictly increase. Persisted durably on every change (changes are rare: one per leader),
 * except while its writes are held (holdWrites).
 */
export class LeaderEpochCache {
  readonly #path: string;
  readonly #disk: Disk;
  #entries: EpochEntry[];
  /** Changes stay in memory until writeHeld (holdWrites). */
  #held = false;
  /** A change made while held is not in the checkpoint yet. */
  #unwritten = false;

  private constructor(path: string, entries: EpochEntry[], disk: Disk) {
    this.#path = path;
    this.#entries = entries;
    this.#disk = disk;
  }

  static open(directory: string, disk: Disk = systemDisk): LeaderEpochCache {
    const path = join(directory, LEADER_EPOCH_CHECKPOINT_FILE);
    return new LeaderEpochCache(path, disk.existsSync(path) ? parseCheckpoint(path, disk) : [], disk);
  }

  get entries(): readonly EpochEntry[] {
    return this.#entries;
  }

  get latestEpoch(): number {
    return this.#entries.at(-1)?.epoch ?? -1;
  }

  /** The epoch that wrote `offset`; -1 when no entry covers it. */
  epochFor(offset: number): number {
    let epoch = -1;
    for (const entry of this.#entries) {
      if (entry.startOffset > offset) break;
      epoch = entry.epoch;
    }
    return epoch;
  }

  /** Records that `epoch` writes from `startOffset` on; a no-op for the current epoch. */
  assign(epoch: number, startOffset: number): void {
    const latest = this.#entries.at(-1);
    if (latest !== undefined && epoch === latest.epoch) return;
    if (latest !== undefined && epoch < latest.epoch) {
      throw new FerryError('InvalidArgument', `leader epoch ${epoch} is older than the log's latest epoch ${latest.epoch}`);
    }
    assert(latest === undefined || startOffset >= latest.startOffset, `epoch ${epoch} starts at ${startOffset}, before epoch ${latest?.epoch}`);
    // An epoch that wrote nothing is replaced by its successor starting at the same offset.
    const kept = this.#entries.filter((entry) => entry.startOffset < startOffset);
    this.#replace([...kept, { epoch, startOffset }]);
  }

  /** Replaces every entry (a log started over from another copy's history, PartitionLog.startAt). */
  reset(entries: readonly EpochEntry[]): void {
    for (let i = 1; i < entries.length; i++)
      assert(entries[i]!.epoch > entries[i - 1]!.epoch && entries[i]!.startOffset > entries[i - 1]!.startOffset, `epoch entries increase: ${JSON.stringify(entries)}`);
    this.#replace([...entries]);
  }

  /** Forgets epochs that start at or after `endOffset` (the log was truncated there). */
  truncateFromEnd(endOffset: number): void {
    const kept = this.#entries.filter((entry) => entry.startOffset < endOffset);
    if (kept.length !== this.#entries.length) this.#replace(kept);
  }

  /**
   * [C5] An adopted log's rebuild: changes stay in memory until writeHeld, since no crash leaves an
   * adopted log that is read again (its disk's syncs are off until it serves for the same reason,
   * BarriersOnceArmed). A rebuild meets each epoch
   * of its range (one per takeover), and each change wrote and renamed a checkpoint: 4 of the ~10
   * files an adoption created, each open waiting on the file system's journal behind other writers'
   * fsyncs, the event loop blocked meanwhile (issue 28: the top of a profile of 500 adoptions).
   */
  holdWrites(): void {
    this.#held = true;
  }

  /** Writes what changed while held (once), and every change from now on. */
  writeHeld(): void {
    this.#held = false;
    if (this.#unwritten) this.#replace(this.#entries);
  }

  #replace(entries: EpochEntry[]): void {
    if (this.#held) {
      this.#entries = entries;
      this.#unwritten = true;
      return;
    }
    const lines = [String(CHECKPOINT_FORMAT_VERSION), String(entries.length), ...entries.map((e) => `${e.epoch} ${e.startOffset}`)];
    writeFileAtomicSync(this.#path, new TextEncoder().encode(`${lines.join('\n')}\n`), this.#disk);
    this.#entries = entries;
    this.#unwritten = false;
  }
}

function parseCheckpoint(path: string, disk: Disk): EpochEntry[] {
  const lines = readTextFileSync(disk, path)
    .split('\n')
    .filter((line) => line.length > 0);
  const corrupt = (why: string) => new FerryError('Storage', `${path} is corrupt: ${why}`);
  if (lines[0] !== String(CHECKPOINT_FORMAT_VERSION)) throw corrupt(`unknown version ${lines[0]}`);
  const count = Number(lines[1]);
  if (!Number.isSafeInteger(count) || count !== lines.length - 2) throw corrupt(`count ${lines[1]} but ${lines.length - 2} entries`);
  const entries: EpochEntry[] = [];
  for (const line of lines.slice(2)) {
    const [epoch, startOffset] = line.split(' ').map(Number);
    const previous = entries.at(-1);
    const valid = Number.isSafeInteger(epoch) && Number.isSafeInteger(startOffset) && epoch! >= 0 && startOffset! >= 0;
    if (!valid || (previous && (epoch! <= previous.epoch || startOffset! <= previous.startOffset))) throw corrupt(`bad entry "${line}"`);
    entries.push({ epoch: epoch!, startOffset: startOffset! });
  }
  return entries;
}
