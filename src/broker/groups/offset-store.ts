import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { FerryError } from '../../errors.ts';
import type { ControlStore } from '../../control/control-store.ts';
import { type Disk, systemDisk } from '../../util/disk.ts';
import { regressed } from '../../util/regressions.ts';
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
   * a deleted incarnation is not one of the topic created again (docs/design.md contract 10).
   */
  readonly topicId?: Uuid;
}

export interface GroupOffset {
  readonly topic: string;
  readonly partition: number;
  readonly committed: CommittedOffset;
}

/**
 * A coordinator's hold on a group (docs/cluster-protocol.md, group coordination): the process
 * that claimed it and the claim's epoch, one past the previous claim's. Commits are written only
 * under the claim the group's state here was built under, so a coordinator that another broker
 * took the group from (their views of the live brokers differed, or this one was paused) commits
 * nothing more for the members it still holds.
 */
export interface CoordinatorClaim {
  readonly claimant: string;
  readonly epoch: number;
}

/** The one claim of a single broker's store: no other coordinator exists. */
export const LOCAL_CLAIM: CoordinatorClaim = { claimant: 'local', epoch: 0 };

export function sameClaim(a: CoordinatorClaim | undefined, b: CoordinatorClaim): boolean {
  return a !== undefined && a.claimant === b.claimant && a.epoch === b.epoch;
}

/** Where committed consumer-group offsets live: the broker's directory, or the cluster's control records. */
export interface GroupOffsetStore {
  /**
   * Makes this broker the group's coordinator of record, or finds it still is: the claim that
   * commits and removals must name. Claiming a group another broker holds takes it from that
   * broker (whose next write for the group is refused with NotCoordinator). `fresh`: judged
   * from the record as it is now, never from a claim cached here (which may be lost by now).
   */
  claim(group: string, fresh?: boolean): Promise<CoordinatorClaim>;
  /**
   * Stores the offsets; throws NotCoordinator (writing nothing) once the group is claimed by
   * another, and StaleMember once `stillAllowed` says no: it is asked right before each write,
   * so a member that left its generation while the write was on its way writes nothing.
   */
  commit(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim, stillAllowed?: () => boolean): Promise<void>;
  /** Every committed partition of the group. */
  list(group: string): Promise<GroupOffset[]>;
  /** Every group with committed offsets. */
  groups(): Promise<string[]>;
  /** Removes these offsets of the group, each only if it is still the commit listed (not committed again since); NotCoordinator as commit. */
  remove(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim): Promise<void>;
  /** Forgets what is cached of the group (it left this coordinator's memory); its record keeps any claim. */
  forget(group: string): void;
}

/** 2: the file lists its groups as [group, offsets] pairs (any group id, "__proto__" too, is a plain string). */
const GROUP_OFFSETS_FILE_VERSION = 2;

/**
 * Consumer group offsets, kept durably in the broker's directory (msgpack, written atomically on
 * every commit): a single broker's store. A cluster keeps them in control records instead
 * (ControlOffsetStore), so a new coordinator finds them after a failover.
 */
export class OffsetStore implements GroupOffsetStore {
  readonly #path: string;
  readonly #groups: Map<string, Record<string, CommittedOffset>>;
  readonly #disk: Disk;

  private constructor(path: string, groups: Map<string, Record<string, CommittedOffset>>, disk: Disk) {
    this.#path = path;
    this.#disk = disk;
    this.#groups = groups;
  }

  static open(directory: string, disk: Disk = systemDisk): OffsetStore {
    const path = join(directory, GROUP_OFFSETS_FILE);
    if (!disk.existsSync(path)) return new OffsetStore(path, new Map(), disk);
    try {
      return new OffsetStore(path, decodeGroupOffsetsFile(unpack(disk.readFileSync(path))), disk);
    } catch (error) {
      throw new FerryError('Storage', `${path} is not a group offsets file: ${String(error)}`, { cause: error });
    }
  }

  async claim(): Promise<CoordinatorClaim> {
    return LOCAL_CLAIM;
  }

  forget(): void {}

  /** A single broker's store has the one claim: no other coordinator can take its groups. */
  async commit(group: string, offsets: readonly GroupOffset[], _claim: CoordinatorClaim = LOCAL_CLAIM, stillAllowed: () => boolean = ALWAYS): Promise<void> {
    if (!stillAllowed()) throw staleMember(group);
    const stored = { ...this.#groups.get(group) };
    for (const { topic, partition, committed } of offsets) stored[`${topic}\u0000${partition}`] = committed;
    this.#replace(group, stored);
  }

  /** Writes the file with `group`'s offsets replaced (null: removed), then serves them: a failed write (ENOSPC, EMFILE) changes nothing. */
  #replace(group: string, stored: Record<string, CommittedOffset> | null): void {
    const next = new Map(this.#groups);
    if (stored === null) next.delete(group);
    else next.set(group, stored);
    writeFileAtomicSync(this.#path, pack({ version: GROUP_OFFSETS_FILE_VERSION, groups: [...next] }), this.#disk);
    if (stored === null) this.#groups.delete(group);
    else this.#groups.set(group, stored);
  }

  async list(group: string): Promise<GroupOffset[]> {
    return Object.entries(this.#groups.get(group) ?? {}).map(([key, committed]) => {
      const [topic, partition] = key.split('\u0000');
      return { topic: topic!, partition: Number(partition), committed };
    });
  }

  async groups(): Promise<string[]> {
    return [...this.#groups.keys()];
  }

  async remove(group: string, offsets: readonly GroupOffset[], _claim: CoordinatorClaim = LOCAL_CLAIM): Promise<void> {
    const stored = this.#groups.get(group);
    if (stored === undefined) return;
    const kept = withoutUnchanged(
      stored,
      offsets.map(({ topic, partition, committed }) => [`${topic}\u0000${partition}`, committed]),
    );
    if (Object.keys(kept).length === Object.keys(stored).length) return;
    this.#replace(group, Object.keys(kept).length === 0 ? null : kept);
  }
}

/** The groups of a group offsets file: version 2's pairs, or the first version's object by group id. */
function decodeGroupOffsetsFile(decoded: unknown): Map<string, Record<string, CommittedOffset>> {
  const file = decoded as { version?: unknown; groups?: unknown };
  if (file.version === GROUP_OFFSETS_FILE_VERSION && Array.isArray(file.groups)) return new Map(file.groups as [string, Record<string, CommittedOffset>][]);
  return new Map(Object.entries(decoded as Record<string, Record<string, CommittedOffset>>));
}

const ALWAYS = () => true;

function staleMember(group: string): FerryError {
  return new FerryError('StaleMember', `a commit of group ${group} by a member no longer of its generation`);
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
/** Claims cached per broker; past it the cache starts over (a claim is found again in its record, at one read). */
const CLAIMS_CACHED_MAX = 100_000;

/** This process, as the claimant of the groups it coordinates. */
export interface Claimant {
  readonly nodeId: number;
  /** Unique to the process (its cluster incarnation): a restarted broker claims afresh. */
  readonly incarnation: string;
}

/**
 * A group's control record: its coordinator's claim, and its committed offsets by
 * "topic/partition"; any other field (a later version's) is kept as it is by every write.
 */
interface GroupRecord {
  readonly coordinator?: CoordinatorClaim & { readonly nodeId: number };
  readonly offsets: Readonly<Record<string, CommittedOffset>>;
  readonly [field: string]: unknown;
}

/** What the store holds: a GroupRecord, the flat offsets of records written before claims existed, or both (a broker of the older version committed beside the new shape). */
type StoredGroupRecord = Readonly<Record<string, unknown>>;

/**
 * The record as read. An older version keeps offsets at the top level by "topic/partition" (a
 * key with "/", which no field name has): they are offsets too, and the newer of the two for their
 * partition (an older broker writes them over what it read, during a rolling upgrade).
 */
function groupRecordOf(value: StoredGroupRecord | undefined): GroupRecord {
  const fields: Record<string, unknown> = {};
  const flat: Record<string, CommittedOffset> = {};
  for (const [key, field] of Object.entries(value ?? {})) {
    if (key.includes('/')) flat[key] = field as CommittedOffset;
    else fields[key] = field;
  }
  const nested = typeof fields.offsets === 'object' && fields.offsets !== null ? (fields.offsets as Record<string, CommittedOffset>) : {};
  return { ...fields, offsets: { ...nested, ...flat } } as GroupRecord;
}

/**
 * Group offsets as one control record per group, changed by compare-and-swap (docs/cluster-protocol.md).
 * The record also names the group's coordinator: every write checks, in the round that writes,
 * that the record still holds the writer's claim.
 */
export class ControlOffsetStore implements GroupOffsetStore {
  readonly #control: ControlStore;
  readonly #claimant: Claimant;
  readonly #claims = new Map<string, CoordinatorClaim>();
  readonly #claiming = new Map<string, Promise<CoordinatorClaim>>();
  /** The offsets of each group as this broker last loaded or wrote them (only with the offset-fetch-stale-cache switch on). */
  readonly #loaded = new Map<string, Readonly<Record<string, CommittedOffset>>>();

  constructor(control: ControlStore, claimant: Claimant) {
    this.#control = control;
    this.#claimant = claimant;
  }

  claim(group: string, fresh = false): Promise<CoordinatorClaim> {
    const held = fresh ? undefined : this.#claims.get(group);
    if (held !== undefined) return Promise.resolve(held);
    let claiming = this.#claiming.get(group);
    if (claiming === undefined) {
      claiming = this.#takeClaim(group).finally(() => this.#claiming.delete(group));
      this.#claiming.set(group, claiming);
    }
    return claiming;
  }

  /** [G1] Finds the record naming this process (a claim whose answer was lost, or a cache started over), or claims at the next epoch. */
  async #takeClaim(group: string): Promise<CoordinatorClaim> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<StoredGroupRecord>(groupKey(group));
      const record = groupRecordOf(current?.value);
      const named = record.coordinator;
      if (named?.claimant === this.#claimant.incarnation) return this.#hold(group, { claimant: named.claimant, epoch: named.epoch });
      const claim = { claimant: this.#claimant.incarnation, epoch: (named?.epoch ?? 0) + 1 };
      const next: GroupRecord = { ...record, coordinator: { nodeId: this.#claimant.nodeId, ...claim } };
      const written = current === null ? await this.#control.create(groupKey(group), next) : await this.#control.replace(groupKey(group), current, next);
      if (written !== null) return this.#hold(group, claim);
    }
    throw new FerryError('Storage', `claiming group ${group}: lost ${COMMIT_ATTEMPTS_MAX} compare-and-swap rounds in a row`);
  }

  #hold(group: string, claim: CoordinatorClaim): CoordinatorClaim {
    if (this.#claims.size >= CLAIMS_CACHED_MAX) this.#claims.clear();
    this.#claims.set(group, claim);
    return claim;
  }

  forget(group: string): void {
    this.#claims.delete(group);
    this.#loaded.delete(group);
  }

  commit(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim, stillAllowed: () => boolean = ALWAYS): Promise<void> {
    return this.#change(group, claim, 'offsets', (stored) => {
      if (!stillAllowed()) throw staleMember(group);
      const next = { ...stored };
      for (const { topic, partition, committed } of offsets) next[`${topic}/${partition}`] = committed;
      return next;
    });
  }

  async list(group: string): Promise<GroupOffset[]> {
    // The bug: the copy loaded while this broker last held the group answers, though another coordinator may have committed since.
    const loaded = regressed('offset-fetch-stale-cache') ? this.#loaded.get(group) : undefined;
    const offsets = loaded ?? groupRecordOf((await this.#control.read<StoredGroupRecord>(groupKey(group)))?.value).offsets;
    if (regressed('offset-fetch-stale-cache')) this.#loaded.set(group, offsets);
    return Object.entries(offsets).map(([key, committed]) => {
      const at = key.lastIndexOf('/');
      return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)), committed };
    });
  }

  async groups(): Promise<string[]> {
    return (await this.#control.list(GROUPS_PREFIX)).map((key) => decodeURIComponent(key.slice(GROUPS_PREFIX.length)));
  }

  /**
   * Removes by compare-and-swap, so a commit racing with expiry is never lost. A group left with
   * no offsets keeps its record: it names the coordinator, and the store has no conditional
   * delete (an unconditional one could erase a commit that landed in between).
   */
  remove(group: string, offsets: readonly GroupOffset[], claim: CoordinatorClaim): Promise<void> {
    return this.#change(group, claim, 'expired offsets', (stored) => {
      const kept = withoutUnchanged(
        stored,
        offsets.map(({ topic, partition, committed }) => [`${topic}/${partition}`, committed]),
      );
      return Object.keys(kept).length === Object.keys(stored).length ? null : kept;
    });
  }

  /**
   * [G2] Rewrites the group's offsets by `change` (null: nothing to write) while the record holds
   * `claim`. The claim is checked on the version each round writes over, so no write lands after
   * another coordinator's claim; a lost claim is forgotten here and reported as NotCoordinator.
   */
  async #change(group: string, claim: CoordinatorClaim, what: string, change: (stored: Readonly<Record<string, CommittedOffset>>) => Record<string, CommittedOffset> | null): Promise<void> {
    for (let attempt = 0; attempt < COMMIT_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<StoredGroupRecord>(groupKey(group));
      const record = groupRecordOf(current?.value);
      if (current === null || !sameClaim(record.coordinator, claim)) {
        if (sameClaim(this.#claims.get(group), claim)) this.#claims.delete(group);
        throw new FerryError(
          'NotCoordinator',
          `${what} of group ${group}: its record names coordinator ${record.coordinator === undefined ? 'none' : `${record.coordinator.nodeId} (claim ${record.coordinator.epoch})`}, not this claim ${claim.epoch}`,
        );
      }
      const offsets = change(record.offsets);
      if (offsets === null) return;
      if ((await this.#control.replace(groupKey(group), current, { ...record, offsets })) !== null) {
        if (regressed('offset-fetch-stale-cache')) this.#loaded.set(group, offsets); // this coordinator's own writes keep its copy current
        return;
      }
    }
    throw new FerryError('Storage', `${what} of group ${group}: lost ${COMMIT_ATTEMPTS_MAX} compare-and-swap rounds in a row`);
  }
}

const GROUPS_PREFIX = 'groups/';

function groupKey(group: string): string {
  return `${GROUPS_PREFIX}${encodeURIComponent(group)}`;
}
