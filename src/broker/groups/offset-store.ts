import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { FerryError } from '../../errors.ts';
import { writeFileAtomicSync } from '../../util/files.ts';

export const GROUP_OFFSETS_FILE = 'group-offsets.msgpack';

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
}

type Stored = Record<string, Record<string, CommittedOffset>>; // group -> "topic\u0000partition" -> offset

/**
 * Consumer group offsets, kept durably in the broker's directory (msgpack, written atomically on
 * every commit). The control-metadata bucket takes this role when brokers share a store.
 */
export class OffsetStore {
  readonly #path: string;
  readonly #groups: Stored;

  private constructor(path: string, groups: Stored) {
    this.#path = path;
    this.#groups = groups;
  }

  static open(directory: string): OffsetStore {
    const path = join(directory, GROUP_OFFSETS_FILE);
    if (!existsSync(path)) return new OffsetStore(path, {});
    try {
      return new OffsetStore(path, unpack(readFileSync(path)) as Stored);
    } catch (error) {
      throw new FerryError('Storage', `${path} is not a group offsets file: ${String(error)}`, { cause: error });
    }
  }

  commit(group: string, offsets: readonly { topic: string; partition: number; committed: CommittedOffset }[]): void {
    const stored = (this.#groups[group] ??= {});
    for (const { topic, partition, committed } of offsets) stored[`${topic}\u0000${partition}`] = committed;
    writeFileAtomicSync(this.#path, pack(this.#groups));
  }

  fetch(group: string, topic: string, partition: number): CommittedOffset | null {
    return this.#groups[group]?.[`${topic}\u0000${partition}`] ?? null;
  }

  /** Every committed partition of a group (OffsetFetch with all topics). */
  list(group: string): { topic: string; partition: number; committed: CommittedOffset }[] {
    return Object.entries(this.#groups[group] ?? {}).map(([key, committed]) => {
      const [topic, partition] = key.split('\u0000');
      return { topic: topic!, partition: Number(partition), committed };
    });
  }
}
