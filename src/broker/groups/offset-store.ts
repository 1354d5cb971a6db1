import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { FerryError } from '../../errors.ts';
import type { ControlStore } from '../../cluster/control-store.ts';
import { type Disk, systemDisk } from '../../util/disk.ts';
import { writeFileAtomicSync } from '../../util/files.ts';
import type { Uuid } from '../../util/uuid.ts';

export const GROUP_OFFSETS_FILE = 'group-offsets.msgpack';

export interface CommittedOffset {
  readonly offset: number;
  readonly leaderEpoch: number;
  readonly metadata: string | null;
  /** When the coordinator accepted the commit (clock.nowMs): offsets expire from it (offset-expiry.ts). Absent in older files. */
  readonly commitTimestampMs?: number;
  /**
   * Committed by a group member (a generation id >= 0), not a simple consumer: its group's emptiness
   * counts for expiry (KIP-211), so after a restart it waits a retention from when it is first found.
   * Absent in older files: counted as a member's (it may be one), so its offset never expires early.
   */
  readonly byMember?: boolean;
  /**
   * The topic incarnation it was committed for (absent when the topic was unknown): an offset of
   * a deleted incarnation is not one of the topic created again (DESIGN.md contract 10).
   */
  readonly topicId?: Uuid;
}

type Stored = Record<string, Record<string, CommittedOffset>>; // group -> "topic\u0000partition" -> offset

export interface GroupOffset {
  readonly topic: string;
  readonly partition: number;
  readonly committed: CommittedOffset;
}

/** Where committed consumer-group offsets live: the broker's directory, or the cluster's control records. */
export interface GroupOffsetStore {
  commit(group: string, offsets: readonly GroupOffset[]): Promise<void>;
  /** Every committed partition of the group. */
  list(group: string): Promise<GroupOffset[]>;
  /** Every group with committed offsets. */
  groups(): Promise<string[]>;
  /** Removes these offsets of the group, each only if it is still the commit listed (not committed again since). */
  remove(group: string, offsets: readonly GroupOffset[]): Promise<void>;
}

/**
 * Consumer group offsets, kept durably in the broker's directory (msgpack, written atomically on
 * every commit): a single broker's store. A cluster keeps them in control records instead
 * (ControlOffsetStore), so a new coordinator finds them after a failover.
 */
export class OffsetStore implements GroupOffsetStore {
  readonly #path: string;
  readonly #groups: Stored;
  readonly #disk: Disk;

  private constructor(path: string, groups: Stored, disk: Disk) {
    this.#path = path;
    this.#disk = disk;
    this.#groups = groups;
  }

  static open(directory: string, disk: Disk = systemDisk): OffsetStore {
    const path = join(directory, GROUP_OFFSETS_FILE);
    if (!disk.existsSync(path)) return new OffsetStore(path, {}, disk);
    try {
      return new OffsetStore(path, unpack(disk.readFileSync(path)) as Stored, disk);
    } catch (error) {
      throw new FerryError('Storage', `${path} is not a group offsets file: ${String(error)}`, { cause: error });
    }
  }

  async commit(group: string, offsets: readonly GroupOffset[]): Promise<void> {
    const stored = { ...this.#groups[group] };
    for (const { topic, partition, committed } of offsets) stored[`${topic}\u0000${partition}`] = committed;
    this.#replace(group, stored);
  }

  /** Writes the file with `group`'s offsets replaced (null: removed), then serves them: a failed write (ENOSPC, EMFILE) changes nothing. */
  #replace(group: string, stored: Record<string, CommittedOffset> | null): void {
    const next: Stored = { ...this.#groups };
    if (stored === null) delete next[group];
    else next[group] = stored;
    writeFileAtomicSync(this.#path, pack(next), this.#disk);
    if (stored === null) delete this.#groups[group];
    else this.#groups[group] = stored;
  }

  async list(group: string): Promise<GroupOffset[]> {
    return Object.entries(this.#groups[group] ?? {}).map(([key, committed]) => {
      const [topic, partition] = key.split('\u0000');
      return { topic: topic!, partition: Number(partition), committed };
    });
  }

  async groups(): Promise<string[]> {
    return Object.keys(this.#groups);
  }

  async remove(group: string, offsets: readonly GroupOffset[]): Promise<void> {
    const stored = this.#groups[group];
    if (stored === undefined) return;
    const kept = withoutUnchanged(stored, offsets.map(({ topic, partition, committed }) => [`${topic}\u0000${partition}`, committed]));
    if (Object.keys(kept).length === Object.keys(stored).length) return;
    this.#replace(group, Object.keys(kept).length === 0 ? null : kept);
  }
}

/** The stored offsets minus those listed, each only if still the same commit. */
function withoutUnchanged(stored: Readonly<Record<string, CommittedOffset>>, removed: readonly (readonly [string, CommittedOffset])[]): Record<string, CommittedOffset> {
  const kept = { ...stored };
  for (const [key, committed] of removed) if (sameCommit(kept[key], committed)) delete kept[key];
  return kept;
}

function sameCommit(a: CommittedOffset | undefined, b: CommittedOffset): boolean {
  return a !== undefined && a.offset === b.offset && a.leaderEpoch === b.leaderEpoch && a.metadata === b.metadata && a.commitTimestampMs === b.commitTimestampMs;
}

/** Compare-and-swap rounds a commit may lose to a concurrent writer before it reports the race. */
const COMMIT_ATTEMPTS_MAX = 10;

/** Group offsets as one control record per group, changed by compare-and-swap (docs/cluster-protocol.md). */
export class ControlOffsetStore implements GroupOffsetStore {
  readonly #control: ControlStore;

  constructor(control: ControlStore) {
    this.#control = control;
  }

  async commit(group: string, offsets: readonly GroupOffset[]): Promise<void> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<Record<string, CommittedOffset>>(groupKey(group));
      const next = { ...(current?.value ?? {}) };
      for (const { topic, partition, committed } of offsets) next[`${topic}/${partition}`] = committed;
      const written = current === null ? await this.#control.create(groupKey(group), next) : await this.#control.replace(groupKey(group), current, next);
      if (written !== null) return;
    }
    throw new FerryError('Storage', `offsets of group ${group}: lost ${COMMIT_ATTEMPTS_MAX} compare-and-swap rounds in a row`);
  }

  async list(group: string): Promise<GroupOffset[]> {
    const record = await this.#control.read<Record<string, CommittedOffset>>(groupKey(group));
    return Object.entries(record?.value ?? {}).map(([key, committed]) => {
      const at = key.lastIndexOf('/');
      return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)), committed };
    });
  }

  async groups(): Promise<string[]> {
    return (await this.#control.list(GROUPS_PREFIX)).map((key) => decodeURIComponent(key.slice(GROUPS_PREFIX.length)));
  }

  /**
   * Removes by compare-and-swap, so a commit racing with expiry is never lost. A group left with
   * no offsets keeps an empty record: the store has no conditional delete, and an unconditional
   * one could erase a commit that landed in between.
   */
  async remove(group: string, offsets: readonly GroupOffset[]): Promise<void> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<Record<string, CommittedOffset>>(groupKey(group));
      if (current === null) return;
      const kept = withoutUnchanged(current.value, offsets.map(({ topic, partition, committed }) => [`${topic}/${partition}`, committed]));
      if (Object.keys(kept).length === Object.keys(current.value).length) return;
      if ((await this.#control.replace(groupKey(group), current, kept)) !== null) return;
    }
    throw new FerryError('Storage', `expiring offsets of group ${group}: lost ${COMMIT_ATTEMPTS_MAX} compare-and-swap rounds in a row`);
  }
}

const GROUPS_PREFIX = 'groups/';

function groupKey(group: string): string {
  return `${GROUPS_PREFIX}${encodeURIComponent(group)}`;
}
