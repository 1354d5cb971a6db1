import { assert } from '../util/assert.ts';
import { regressed } from '../util/regressions.ts';
import type { Uuid } from '../util/uuid.ts';
import type { StreamId } from './keys.ts';
import type { ObjectRead, ReadFrame, WalReader } from './reader.ts';

/**
 * The most bytes of whole objects kept for the rebuilds running at once. A takeover's chain is the
 * un-tiered tail of a dead broker's stream: at most TIER_TAIL_MAX_BYTES per partition and
 * TIER_TAIL_MAX_MS of its writes (src/tier/tierer.ts), so a broker that wrote up to ~12 MB/s leaves
 * a tail this holds whole, and each object is read once however many partitions adopt it. Past
 * that the oldest objects make room, and a rebuild that reaches one again reads it again.
 */
export const SHARED_READS_BYTES_MAX = 128 * 1024 * 1024;

/**
 * Reads are shared (whole objects, kept) while at least this many rebuilds hold them. A lone
 * rebuild reads as a follower does, only its partition's frames from its log's end on (a takeover
 * at 10 GB of history fetched 54 MB of tiered frames a partition otherwise: test/wal/read-from-offset),
 * and takes what the shared reads still keep.
 */
export const SHARED_READS_HOLDERS_MIN = 2;

/**
 * How many objects of a stream its LIST holds are fetched ahead of the furthest one a shared read
 * asked for. The rebuilds of a takeover walk one stream together, each REBUILD_READ_AHEAD ahead
 * (src/partition/rebuild.ts), which left the whole batch about that many GETs in flight: the first
 * 32 adoptions of a 500-partition takeover took ~1 s reading a 1,500-object chain (issue 28).
 * Fetched only while what is kept, and the reads ahead in flight counted at the largest object so
 * far, stay under half the budget.
 */
export const SHARED_READ_AHEAD = 32;

/** What a rebuild reads a chain through (src/partition/rebuild.ts): a WalReader, or one partition's view of SharedWalReads. */
export interface ChainReader {
  readonly store: WalReader['store'];
  readonly config: { readonly prefix: string };
  /** Sequence `sequence` of `stream`: absent, a seal, or the wanted frames, those wholly below `fromOffset` left out. */
  read(stream: StreamId, sequence: number, fromOffset?: number): Promise<ObjectRead>;
  /** [F2] Whether the seal read at `sequence` of `stream` is void (WalReader.sealIsVoid). */
  sealIsVoid(stream: StreamId, sequence: number): Promise<boolean>;
  /** The stream's sequences at or above its floor mark: a LIST, which the rebuilds running at once may share (it may be older than this call). */
  list(stream: StreamId): Promise<ReadonlySet<number>>;
  /** A LIST made now (a rebuild that found an object gone asks whether GC moved the floor); shared from then on. */
  listFresh(stream: StreamId): Promise<ReadonlySet<number>>;
  /**
   * The first sequence from `sequence` on that may hold frames for this reader: objects already
   * read whole and known to hold none of its partition's frames are passed over without a read.
   * Absent: every object is read in turn.
   */
  firstMaybeWanted?(stream: StreamId, sequence: number): number;
}

/** Which frames one partition's rebuild applies: its topic, partition and incarnation (docs/design.md contract 10). */
export type FrameWants = (topic: string, partition: number, topicId: Uuid) => boolean;

/** The partition a view reads for: its frames are looked up in each object's index, not filtered from all of them. */
export interface ViewedPartition {
  readonly topic: string;
  readonly partition: number;
}

interface Kept {
  readonly read: Promise<ObjectRead>;
  /** The object's size once read (0 until then, and for a seal). */
  bytes: number;
  /** The read once it settled as data or a seal (null until then). */
  settled: ObjectRead | null;
}

/** Each object read's frames by partition, built once per read the first time a view asks. */
const framesByPartition = new WeakMap<ObjectRead, ReadonlyMap<string, readonly ReadFrame[]>>();

/**
 * [K7] Whole-object reads of sealed WAL streams, shared by the rebuilds that run at once: a
 * takeover that adopts many partitions of a dead broker reads each object of its stream once, and
 * every adopted partition takes its own frames from that read (docs/tier-protocol.md [K7]).
 *
 * Sharing is sound because a rebuild reads only sealed streams, whose objects never change: an
 * object is put once (I4), and a sequence past a stream's seal is never applied, so once a seal at
 * S was found and found not void [F2] (a rebuild asks, `sealIsVoid`), every later sequence of that
 * stream is answered absent without a GET. An absent object and a failed read are not kept (the
 * next reader asks the store again), nor is a seal found void. What is kept lives while a rebuild
 * holds the reads (`hold`) or a scan's batch of adoptions keeps them (`keep`), up to
 * SHARED_READS_BYTES_MAX, oldest out first; when the last of them lets go, everything goes. Each
 * stream's LIST is shared the same way (`list`; `listFresh` replaces it).
 */
export class SharedWalReads {
  readonly #readerFor: (wants: FrameWants) => WalReader;
  /** Reads whole objects (readWhole): the views filter. */
  readonly #reader: WalReader;
  readonly #bytesMax: number;
  /** Insertion order is age: the oldest read first out when over the budget. */
  readonly #kept = new Map<string, Kept>();
  /** Each stream's seal sequence, once a read found it and it was found not void [F2]. */
  readonly #sealAt = new Map<string, number>();
  /** Each stream's LIST while the reads are kept: the rebuilds of one takeover LIST a stream once. */
  readonly #listings = new Map<string, Promise<ReadonlySet<number>>>();
  /** What each of those LISTs found, once it did: where reads ahead go (SHARED_READ_AHEAD). */
  readonly #listed = new Map<string, ReadonlySet<number>>();
  /** Reads fetched ahead and not yet settled: the last holder waits for them (no GET outlives the reads' holders). */
  readonly #fetchingAhead = new Set<Promise<ObjectRead>>();
  /** Each stream's furthest sequence fetched ahead so far. */
  readonly #aheadTo = new Map<string, number>();
  /** The largest object read so far: what a read ahead still in flight is counted at. */
  #objectBytesMax = 0;
  /** The seal checks under way, by stream and sequence: rebuilds that meet one seal at once ask once. */
  readonly #sealChecks = new Map<string, Promise<boolean>>();
  #keptBytes = 0;
  /** Rebuilds running (`hold`): at SHARED_READS_HOLDERS_MIN or more, reads are shared. */
  #holders = 0;
  /** Batches of adoptions under way (`keep`): what is read is kept for all of them, rebuilds between them too. */
  #keepers = 0;

  /** `readerFor(wants)`: a WalReader of the WAL store that fetches the frames `wants` answers true for. */
  constructor(readerFor: (wants: FrameWants) => WalReader, bytesMax = SHARED_READS_BYTES_MAX) {
    assert(bytesMax > 0, `shared WAL reads need a positive budget, not ${bytesMax}`);
    this.#readerFor = readerFor;
    this.#reader = readerFor(() => true);
    this.#bytesMax = bytesMax;
  }

  /** Runs `rebuild` with the reads held: what it and the rebuilds beside it read is kept until the last of them ends. */
  hold<T>(rebuild: () => Promise<T>): Promise<T> {
    return this.#heldBy('rebuild', rebuild);
  }

  /**
   * Runs `adoptions` (one scan's, started a bounded number at a time, [K4]) with what their
   * rebuilds read kept until all of them ended: a rebuild that starts after others of the batch
   * ended finds their objects kept, so the batch reads each object once however it is paced.
   * Whether reads are shared is still up to the rebuilds running at once (a lone one reads only its frames).
   */
  keep<T>(adoptions: () => Promise<T>): Promise<T> {
    return this.#heldBy('batch', adoptions);
  }

  /** Runs `work` counted as a holder of its kind; the last holder to end lets everything go. */
  async #heldBy<T>(kind: 'rebuild' | 'batch', work: () => Promise<T>): Promise<T> {
    const step = (by: number) => (kind === 'rebuild' ? (this.#holders += by) : (this.#keepers += by));
    step(1);
    try {
      return await work();
    } finally {
      step(-1);
      if (!this.#keeping) {
        this.#forget();
        await Promise.allSettled([...this.#fetchingAhead]);
      }
    }
  }

  /** Whether a rebuild or a batch of adoptions holds the reads: while none does, nothing is kept. */
  get #keeping(): boolean {
    return this.#holders > 0 || this.#keepers > 0;
  }

  /**
   * One partition's reader over the shared reads: its frames only, those wholly below `fromOffset`
   * left out. Given the partition (`viewed`), each shared object is indexed once by partition, so a
   * view takes its frames by one lookup and passes over the objects read whole that hold none of
   * them (`firstMaybeWanted`): a takeover of many partitions walks each object once, not once per
   * partition (issue 28: 500 rebuilds of a 1,437-object chain filtered every object's frames each).
   */
  view(wants: FrameWants, viewed?: ViewedPartition): ChainReader {
    const own = this.#readerFor(wants);
    const partitionKey = viewed === undefined ? null : partitionKeyOf(viewed.topic, viewed.partition);
    return {
      store: own.store,
      config: own.config,
      sealIsVoid: (stream, sequence) => this.#sealIsVoid(stream, sequence),
      list: (stream) => this.#list(stream, false),
      listFresh: (stream) => this.#list(stream, true),
      read: async (stream, sequence, fromOffset = 0) => {
        if (this.#isPastSeal(stream, sequence)) return { kind: 'absent' };
        const shared = this.#holders >= SHARED_READS_HOLDERS_MIN || this.#kept.has(keyOf(stream, sequence));
        if (!shared) return own.read(stream, sequence, fromOffset);
        const read = await this.#read(stream, sequence);
        if (read.kind !== 'data') return read;
        const candidates = partitionKey === null || regressed('shared-read-unfiltered') ? read.frames : (indexOf(read).get(partitionKey) ?? []);
        return { ...read, frames: candidates.filter((frame) => isWanted(frame, wants, fromOffset)) };
      },
      ...(partitionKey === null ? {} : { firstMaybeWanted: (stream: StreamId, sequence: number) => this.#firstMaybeWanted(stream, sequence, partitionKey) }),
    };
  }

  /**
   * From `sequence` on, past the objects kept and read as data whose index holds no frame of the
   * partition: they exist (read, not absent), are not seals, and give it nothing to apply. Stops at
   * the first object not kept, still in flight, a seal, or holding the partition's frames.
   */
  #firstMaybeWanted(stream: StreamId, sequence: number, partitionKey: string): number {
    if (regressed('shared-read-unfiltered')) return sequence;
    let next = sequence;
    for (;;) {
      const settled = this.#kept.get(keyOf(stream, next))?.settled;
      if (settled === undefined || settled === null || settled.kind !== 'data') return next;
      if (indexOf(settled).has(partitionKey) && !regressed('rebuild-passes-own-frames')) return next;
      next++;
    }
  }

  /** Bytes of whole objects kept now. */
  get keptBytes(): number {
    return this.#keptBytes;
  }

  /** [F2] Asked of the store once per stream while held: a seal found valid stays valid (GC never marks above a seal), and then ends the stream for every read. */
  async #sealIsVoid(stream: StreamId, sequence: number): Promise<boolean> {
    const name = streamName(stream);
    if (this.#sealAt.get(name) === sequence) return false;
    const key = keyOf(stream, sequence);
    let check = this.#sealChecks.get(key);
    if (check === undefined) {
      check = this.#reader.sealIsVoid(stream, sequence);
      this.#sealChecks.set(key, check);
      void check.then(
        () => this.#sealChecks.delete(key),
        () => this.#sealChecks.delete(key),
      );
    }
    const isVoid = await check;
    if (isVoid) {
      const kept = this.#kept.get(key);
      if (kept !== undefined) this.#drop(key, kept); // its sealer deletes it: no rebuild is handed it again
      this.#listings.delete(name); // it listed the void seal above its floor: a rebuild that starts over [K2] LISTs again
      this.#listed.delete(name);
      this.#aheadTo.delete(name);
    } else if (this.#keeping) this.#sealAt.set(name, Math.min(sequence, this.#sealAt.get(name) ?? sequence));
    return isVoid;
  }

  /**
   * A LIST shared while the reads are kept. A shared one may predate a GC round (its floor too
   * low): the rebuild then finds an object gone, LISTs fresh (`fresh`), and that LIST replaces
   * this one, so a rebuild that starts over [K2] does not meet the old floor again.
   */
  #list(stream: StreamId, fresh: boolean): Promise<ReadonlySet<number>> {
    const name = streamName(stream);
    const shared = this.#listings.get(name);
    if (shared !== undefined && !fresh) return shared;
    const listing = this.#reader.list(stream);
    if (!this.#keeping) return listing;
    this.#listings.set(name, listing);
    listing.then(
      (listed) => {
        if (this.#listings.get(name) === listing) this.#listed.set(name, listed);
      },
      () => {
        if (this.#listings.get(name) === listing) this.#listings.delete(name); // a failed LIST is not kept: the next asks again
      },
    );
    return listing;
  }

  #isPastSeal(stream: StreamId, sequence: number): boolean {
    const sealAt = this.#sealAt.get(streamName(stream));
    return sealAt !== undefined && sequence > sealAt;
  }

  /** The whole object, from what is kept or read and kept now, with the objects after it fetched ahead. */
  #read(stream: StreamId, sequence: number): Promise<ObjectRead> {
    const read = this.#readOne(stream, sequence);
    if (this.#keeping) this.#fetchAhead(stream, sequence);
    return read;
  }

  /**
   * SHARED_READ_AHEAD: the objects the stream's LIST found after `sequence`, up to that many past
   * it, not kept yet and not past its seal, while what is kept and what is in flight stay under half the budget.
   */
  #fetchAhead(stream: StreamId, sequence: number): void {
    const name = streamName(stream);
    const listed = this.#listed.get(name);
    // Nothing ahead until an object's size is known: a burst of unknown sizes could outgrow the budget and evict itself before use.
    if (listed === undefined || this.#objectBytesMax === 0) return;
    const from = Math.max(sequence + 1, (this.#aheadTo.get(name) ?? -1) + 1);
    for (let next = from; next <= sequence + SHARED_READ_AHEAD && listed.has(next) && !this.#isPastSeal(stream, next); next++) {
      // In flight, a read ahead holds no bytes yet: counted at the largest object read so far (review 28d: with a small budget, reads ahead evicted each other before use).
      if (this.#keptBytes + this.#fetchingAhead.size * this.#objectBytesMax > this.#bytesMax / 2) return;
      this.#aheadTo.set(name, next);
      if (this.#kept.has(keyOf(stream, next))) continue;
      const ahead = this.#readOne(stream, next);
      this.#fetchingAhead.add(ahead);
      const settled = () => void this.#fetchingAhead.delete(ahead);
      ahead.then(settled, settled);
    }
  }

  #readOne(stream: StreamId, sequence: number): Promise<ObjectRead> {
    const key = keyOf(stream, sequence);
    const kept = this.#kept.get(key);
    if (kept !== undefined) return kept.read;
    const read = this.#reader.readWhole(stream, sequence);
    if (!this.#keeping) return read; // nobody holds the reads: nothing to share them with
    const entry: Kept = { read, bytes: 0, settled: null };
    this.#kept.set(key, entry);
    read.then(
      (done) => this.#settled(key, entry, done),
      () => this.#drop(key, entry),
    );
    return read;
  }

  #settled(key: string, entry: Kept, read: ObjectRead): void {
    if (this.#kept.get(key) !== entry) return; // forgotten meanwhile
    if (read.kind === 'absent') return this.#drop(key, entry);
    entry.settled = read;
    if (read.kind === 'seal') return; // kept (no bytes to count); it ends the stream once found valid (#sealIsVoid)
    entry.bytes = read.sizeBytes;
    this.#keptBytes += entry.bytes;
    this.#objectBytesMax = Math.max(this.#objectBytesMax, entry.bytes);
    // Oldest out first, whatever order the reads settled in; reads in flight and seals hold no bytes and stay.
    for (const [oldestKey, oldest] of this.#kept) {
      if (this.#keptBytes <= this.#bytesMax) break;
      if (oldest.bytes > 0) this.#drop(oldestKey, oldest);
    }
  }

  #drop(key: string, entry: Kept): void {
    if (this.#kept.get(key) !== entry) return;
    this.#kept.delete(key);
    this.#keptBytes -= entry.bytes;
  }

  #forget(): void {
    this.#kept.clear();
    this.#listings.clear();
    this.#listed.clear();
    this.#aheadTo.clear();
    this.#sealAt.clear();
    this.#keptBytes = 0;
  }
}

function isWanted(frame: ReadFrame, wants: FrameWants, fromOffset: number): boolean {
  const { entry } = frame;
  if (regressed('shared-read-unfiltered')) return true;
  return entry.lastOffset >= fromOffset && wants(entry.topic, entry.partition, entry.topicId);
}

/** The frames of a data read by partition (topic and partition: the incarnation is each view's own filter), built once per read. */
function indexOf(read: ObjectRead & { kind: 'data' }): ReadonlyMap<string, readonly ReadFrame[]> {
  let index = framesByPartition.get(read);
  if (index === undefined) {
    const built = new Map<string, ReadFrame[]>();
    for (const frame of read.frames) {
      const key = partitionKeyOf(frame.entry.topic, frame.entry.partition);
      const frames = built.get(key);
      if (frames === undefined) built.set(key, [frame]);
      else frames.push(frame);
    }
    framesByPartition.set(read, built);
    index = built;
  }
  return index;
}

function partitionKeyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function keyOf(stream: StreamId, sequence: number): string {
  return `${streamName(stream)}/${sequence}`;
}

function streamName(stream: StreamId): string {
  return `${stream.writerId}/${stream.epoch}`;
}
