import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from './apply.ts';
import type { TierStart } from '../tier/tier-start.ts';
import { floorOf } from '../wal/floor.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ObjectRead, ReadFrame } from '../wal/reader.ts';
import type { ChainReader } from '../wal/shared-reads.ts';
import { assert } from '../util/assert.ts';
import { mapLimited } from '../util/map-limited.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';

/**
 * [K6] The first `count` streams of a partition's chain are sealed and hold no frame of its
 * incarnation at or above `fromOffset` (a tiered end): a takeover seals none of them again, and a
 * rebuild from `fromOffset` or later reads none of them. Sealed streams take no frames, and the
 * tiered end only grows, so this stays true; a leader writes it into the record once its
 * adoption read the chain.
 */
export interface SettledPrefix {
  readonly count: number;
  readonly fromOffset: number;
}

/**
 * How many WAL objects of one stream a rebuild reads ahead of the one it applies. The reads are
 * independent GETs; one at a time, a chain of a few hundred objects took seconds of store latency
 * per partition (a restarted broker rebuilding its partitions one after another outlived the
 * takeover bound of the simulation, seed 1269). The cost: up to this many objects held at once,
 * and up to this many GETs of absent objects past each stream's seal.
 */
export const REBUILD_READ_AHEAD = 8;

/** How many streams of a chain a rebuild LISTs at once (the LISTs come before any read). */
export const REBUILD_LISTS_IN_FLIGHT = 8;

/**
 * How many times a rebuild starts over from a newer tiered end after WAL GC raced it [K2]. Each
 * restart means the tier moved while the rebuild read the chain: a GC round per restart. More than
 * a few in a row is not a race but a chain that lacks offsets the tier does not cover.
 */
export const REBUILD_RESTARTS_MAX = 3;

/**
 * The chain no longer holds what the rebuild needs from where its log starts: an object above a
 * stream's floor was deleted after the LIST, or the first frame found lies above the log's end
 * (GC deleted frames the tier covers past the tiered end the rebuild read). docs/tier-protocol.md
 * [K2]: the tier moved past them; read its end again and start over.
 */
export class WalPrefixCollectedError extends FerryError {
  constructor(message: string) {
    super('Storage', message);
    this.name = 'WalPrefixCollectedError';
  }
}

/**
 * [C5] with docs/tier-protocol.md [K2]: the log starts at the tier's end (`startOf`; null: nothing
 * tiered, from 0), then takes the chain's frames from there on (rebuildFromChain). When WAL GC
 * races the rebuild (WalPrefixCollectedError), the tier is read again and the log started over
 * from the newer end, at most REBUILD_RESTARTS_MAX times. `say` hears of each restart. A
 * `settled` prefix [K6] is skipped when the start is at or above its offset, and the outcome says
 * the prefix this rebuild found; a start that must reach the tiered end (TierStart.mustReach) and
 * does not is a collected chain, not a log to serve.
 */
/** Where a rebuild says what happened (a restart after racing GC), and, when it has `progress`, how many of the objects listed it read so far. */
export interface RebuildVoice {
  (message: string): void;
  progress?: (objectsRead: number, objectsListed: number) => void;
}

export async function rebuildFromTierAndChain(
  reader: ChainReader,
  log: PartitionLog,
  chain: readonly StreamId[],
  topicId: Uuid,
  startOf: () => Promise<TierStart | null>,
  say?: RebuildVoice,
  keepLocal = false,
  settled: SettledPrefix | null = null,
): Promise<RebuildOutcome> {
  for (let restarts = 0; ; restarts++) {
    const start = await startOf();
    const fromOffset = start?.offset ?? 0;
    // [K3] A promoted follower's log that spans the tier's end is kept: only the chain's frames past its end apply.
    // One that starts above it (retention took segments not yet tiered) would leave a hole between the two. The tier's end is
    // mustReach when the start is the record's start (the tier's objects unreadable: its copied run still serves [LS, TE));
    // with nothing tiered there is no end to span (a log retention.* moved above 0 leaves no hole, as its leader's did).
    const tierEnd = start === null ? null : (start.mustReach ?? start.offset);
    // Nor is there a hole below a DeleteRecords start: nothing there is served (a lagging follower starts over at it, applyRecordedLogStart).
    const kept = keepLocal && restarts === 0 && (tierEnd === null || log.logStartOffset <= Math.max(tierEnd, log.deletedBeforeOffset)) && log.logEndOffset >= fromOffset;
    // A restart empties what the previous attempt applied; a first attempt with nothing tiered keeps the fresh log at 0.
    if (!kept && (start !== null || restarts > 0)) log.startAt(fromOffset, start?.epochs ?? [], start?.producers ?? null);
    // [K6] A settled prefix holds nothing from its offset on: a rebuild from there or later skips it.
    const skipped = settled !== null && fromOffset >= settled.fromOffset ? settled.count : 0;
    // What the tier and the chain prove: the tier's end (TE, also when only the record could be read:
    // its copied run holds [LS, TE), seed 250306), then each frame read.
    let chainEnd = tierEnd ?? fromOffset;
    let firstNeeded = chain.length - skipped; // the first stream read that holds a frame at or above fromOffset
    const onFrame = (frame: ReadFrame, index: number) => {
      chainEnd = Math.max(chainEnd, frame.entry.lastOffset + 1);
      if (frame.entry.lastOffset >= fromOffset) firstNeeded = Math.min(firstNeeded, index);
    };
    try {
      // Frames below the log's end are not fetched, unless a kept log's end is what they are to prove [K3].
      // [K7] A restart trusts no LIST shared with other rebuilds: one older than the GC round it met would send it back to the same collected floor (or to another stream's).
      const chainReader = restarts === 0 ? reader : listingFresh(reader);
      const read = await rebuildFromChain(chainReader, log, chain.slice(skipped), topicId, onFrame, kept ? () => 0 : () => log.logEndOffset, say?.progress);
      const mustReach = start?.mustReach;
      if (mustReach !== undefined && log.logEndOffset < mustReach) {
        throw new WalPrefixCollectedError(
          `the chain holds offsets ${fromOffset}..${log.logEndOffset} of the ${fromOffset}..${mustReach} the tier covers (the tier cannot be read, and GC took the rest)`,
        );
      }
      // A start below the tiered end proves nothing of the frames GC took below it: no prefix is noted [K6].
      const settledPrefix = mustReach === undefined ? { count: skipped + firstNeeded, fromOffset } : { count: 0, fromOffset };
      return { ...read, restarts, kept, chainEnd, settled: settledPrefix };
    } catch (error) {
      if (!(error instanceof WalPrefixCollectedError) || restarts >= REBUILD_RESTARTS_MAX) throw error;
      say?.(
        `rebuild from offset ${kept ? log.logEndOffset : (start?.offset ?? 0)} raced WAL GC (${error.message}); reading the tier's end again (restart ${restarts + 1} of at most ${REBUILD_RESTARTS_MAX})`,
      );
    }
  }
}

/** What a rebuild did: reads, bytes, restarts after racing GC; whether a kept local log was built on; the end the tier and the chain prove. */
export interface RebuildOutcome {
  readonly objectsRead: number;
  readonly bytesApplied: number;
  readonly restarts: number;
  readonly kept: boolean;
  readonly chainEnd: number;
  /** [K6] The chain's prefix this rebuild found (or knew) to hold nothing from the tier's end it started at. */
  readonly settled: SettledPrefix;
}

/**
 * [C5] Rebuilds a partition's log from the WAL streams of its chain, oldest first, each from its
 * WAL floor (one LIST: GC deletes a prefix of a stream, docs/tier-protocol.md [G4]) up to its seal:
 * the same verified reads and the same apply rule as a follower, so the log becomes a
 * byte-identical copy of what the previous leaders made durable. Every stream must be sealed.
 * Frames below the log's start (the tier's end, [K2]) are skipped by applyFrame; a frame above its
 * end, an object gone above the floor, or a void seal [F2] (GC collected below it since the LIST)
 * is a GC that raced the rebuild (WalPrefixCollectedError).
 * Only frames of the topic incarnation `topicId` are applied and handed to `onFrame`: a stream
 * also carries the frames of any earlier incarnation of the topic's name (docs/design.md contract 10).
 * Objects are read up to REBUILD_READ_AHEAD ahead but applied strictly in sequence order.
 */
export async function rebuildFromChain(
  reader: ChainReader,
  log: PartitionLog,
  chain: readonly StreamId[],
  topicId: Uuid,
  onFrame?: (frame: ReadFrame, streamIndex: number) => void,
  fetchFrom: () => number = () => 0,
  progress?: (objectsRead: number, objectsListed: number) => void,
): Promise<{ objectsRead: number; bytesApplied: number }> {
  let objectsRead = 0;
  let bytesApplied = 0;
  // Every stream of the chain is LISTed up front, REBUILD_LISTS_IN_FLIGHT at once: one after another,
  // a chain of many streams took a LIST's latency each before its first read. A stream's objects
  // only go from its floor up meanwhile (GC), which the reads below find out.
  const listings = await mapLimited(chain, REBUILD_LISTS_IN_FLIGHT, (stream) => reader.list(stream));
  const objectsListed = listings.reduce((sum, listed) => sum + listed.size, 0);
  for (const [index, stream] of chain.entries()) {
    const listed = listings[index]!;
    const floor = floorOf(listed);
    const reads = new ReadAhead(reader, stream, floor, fetchFrom);
    try {
      for (let sequence = floor; ; sequence++) {
        const maybeWanted = reader.firstMaybeWanted?.(stream, sequence) ?? sequence;
        if (maybeWanted > sequence) {
          objectsRead += maybeWanted - sequence; // read whole for other partitions, none of this one's frames in them
          sequence = maybeWanted;
          reads.passTo(sequence);
        }
        const read = await reads.next(sequence);
        if (read.kind === 'seal') {
          if (!(await reader.sealIsVoid(stream, sequence))) break;
          throw new WalPrefixCollectedError(`WAL stream ${streamName(stream)} has a void seal at ${sequence} (below its floor mark, [F2]): GC collected the objects below it since the LIST`);
        }
        if (read.kind === 'absent') throw await missingObject(reader, stream, sequence);
        objectsRead++;
        progress?.(objectsRead, objectsListed);
        for (const frame of read.frames) {
          if (frame.entry.topicId !== topicId && !regressed('topic-incarnations-mixed')) continue;
          if (frame.entry.baseOffset > log.logEndOffset) {
            throw new WalPrefixCollectedError(
              `WAL stream ${streamName(stream)} continues at offset ${frame.entry.baseOffset} (object ${sequence}, the floor was ${floor}) but the log ends at ${log.logEndOffset}`,
            );
          }
          bytesApplied += applyFrame(log, frame, topicId);
          onFrame?.(frame, index);
        }
      }
    } finally {
      await reads.abandon();
    }
  }
  return { objectsRead, bytesApplied };
}

/**
 * Why object `sequence` is absent: GC raced the rebuild when the floor has moved above it since
 * the LIST (a second LIST, on this rare path only); otherwise the stream simply has no seal.
 */
async function missingObject(reader: ChainReader, stream: StreamId, sequence: number): Promise<FerryError> {
  const floorNow = floorOf(await reader.listFresh(stream));
  // The LIST the rebuild went by may be one shared by the rebuilds of a scan [K7], older than the stream's last objects and GC round: gone is gone all the same.
  if (floorNow > sequence) return new WalPrefixCollectedError(`WAL object ${sequence} of ${streamName(stream)} was collected since the LIST the rebuild went by (the floor is now ${floorNow})`);
  return new FerryError('Storage', `WAL stream ${streamName(stream)} has no object ${sequence} and no seal before it: seal it before rebuilding`);
}

/** `reader` with every LIST made now (ChainReader.listFresh). */
function listingFresh(reader: ChainReader): ChainReader {
  return {
    store: reader.store,
    config: reader.config,
    read: (stream, sequence, fromOffset) => reader.read(stream, sequence, fromOffset),
    sealIsVoid: (stream, sequence) => reader.sealIsVoid(stream, sequence),
    list: (stream) => reader.listFresh(stream),
    listFresh: (stream) => reader.listFresh(stream),
    ...(reader.firstMaybeWanted === undefined ? {} : { firstMaybeWanted: (stream: StreamId, sequence: number) => reader.firstMaybeWanted!(stream, sequence) }),
  };
}

function streamName(stream: StreamId): string {
  return `${stream.writerId}/${stream.epoch}`;
}

/** The reads of one stream, issued in sequence order and kept REBUILD_READ_AHEAD deep. */
class ReadAhead {
  readonly #reader: ChainReader;
  readonly #stream: StreamId;
  readonly #pending = new Map<number, Promise<ObjectRead>>();
  /** Reads issued for objects passed over since: waited for at the end like the rest. */
  readonly #passed: Promise<ObjectRead>[] = [];
  readonly #fetchFrom: () => number;
  #issued: number;

  /** `floor`: the stream's lowest present sequence, where the reads start; `fetchFrom`: frames wholly below it, when a read is issued, are not fetched. */
  constructor(reader: ChainReader, stream: StreamId, floor: number, fetchFrom: () => number) {
    this.#reader = reader;
    this.#stream = stream;
    this.#issued = floor;
    this.#fetchFrom = fetchFrom;
  }

  /** The read of `sequence`; every call asks for the sequence after the previous one's. */
  next(sequence: number): Promise<ObjectRead> {
    while (this.#issued <= sequence + REBUILD_READ_AHEAD - 1) {
      const read = this.#reader.read(this.#stream, this.#issued, this.#fetchFrom());
      read.catch(() => {}); // a read past the seal that fails is never awaited; one before it is, and throws there
      this.#pending.set(this.#issued++, read);
    }
    const read = this.#pending.get(sequence);
    assert(read !== undefined, `WAL object ${sequence} of ${this.#stream.writerId}/${this.#stream.epoch} is read out of order`);
    this.#pending.delete(sequence);
    return read;
  }

  /** The objects below `sequence` are passed over unread (ChainReader.firstMaybeWanted): reads of them already issued are only waited for at the end. */
  passTo(sequence: number): void {
    for (const [issued, read] of this.#pending) {
      if (issued >= sequence) continue;
      this.#passed.push(read);
      this.#pending.delete(issued);
    }
    this.#issued = Math.max(this.#issued, sequence);
  }

  /** Past the seal (or on a failure): the reads still in flight are not applied, only waited for (no stray GETs outlive the rebuild). */
  async abandon(): Promise<void> {
    const left = [...this.#pending.values(), ...this.#passed];
    this.#pending.clear();
    this.#passed.length = 0;
    await Promise.allSettled(left);
  }
}
