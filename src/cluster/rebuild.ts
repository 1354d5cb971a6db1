import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from '../replica/apply.ts';
import type { WalReader } from '../wal/reader.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ObjectRead, ReadFrame } from '../wal/reader.ts';
import { assert } from '../util/assert.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';

/**
 * How many WAL objects of one stream a rebuild reads ahead of the one it applies. The reads are
 * independent GETs; one at a time, a chain of a few hundred objects took seconds of store latency
 * per partition (a restarted broker rebuilding its partitions one after another outlived the
 * takeover bound of the simulation, seed 1269). The cost: up to this many objects held at once,
 * and up to this many GETs of absent objects past each stream's seal.
 */
export const REBUILD_READ_AHEAD = 8;

/**
 * [C5] Rebuilds a partition's log from the WAL streams of its chain, oldest first, each up to
 * its seal: the same verified reads and the same apply rule as a follower, so the log becomes a
 * byte-identical copy of what the previous leaders made durable. Every stream must be sealed.
 * Only frames of the topic incarnation `topicId` are applied and handed to `onFrame`: a stream
 * also carries the frames of any earlier incarnation of the topic's name (DESIGN.md contract 10).
 * Objects are read up to REBUILD_READ_AHEAD ahead but applied strictly in sequence order.
 */
export async function rebuildFromChain(reader: WalReader, log: PartitionLog, chain: readonly StreamId[], topicId: Uuid, onFrame?: (frame: ReadFrame) => void): Promise<{ objectsRead: number; bytesApplied: number }> {
  let objectsRead = 0;
  let bytesApplied = 0;
  for (const stream of chain) {
    const reads = new ReadAhead(reader, stream);
    try {
      for (let sequence = 0; ; sequence++) {
        const read = await reads.next(sequence);
        if (read.kind === 'seal') break;
        if (read.kind === 'absent') {
          throw new FerryError('Storage', `WAL stream ${stream.writerId}/${stream.epoch} has no object ${sequence} and no seal before it: seal it before rebuilding`);
        }
        objectsRead++;
        for (const frame of read.frames) {
          if (frame.entry.topicId !== topicId && !regressed('topic-incarnations-mixed')) continue;
          bytesApplied += applyFrame(log, frame, topicId);
          onFrame?.(frame);
        }
      }
    } finally {
      await reads.abandon();
    }
  }
  return { objectsRead, bytesApplied };
}

/** The reads of one stream, issued in sequence order and kept REBUILD_READ_AHEAD deep. */
class ReadAhead {
  readonly #reader: WalReader;
  readonly #stream: StreamId;
  readonly #pending = new Map<number, Promise<ObjectRead>>();
  #issued = 0;

  constructor(reader: WalReader, stream: StreamId) {
    this.#reader = reader;
    this.#stream = stream;
  }

  /** The read of `sequence`; every call asks for the sequence after the previous one's. */
  next(sequence: number): Promise<ObjectRead> {
    while (this.#issued <= sequence + REBUILD_READ_AHEAD - 1) {
      const read = this.#reader.read(this.#stream, this.#issued);
      read.catch(() => {}); // a read past the seal that fails is never awaited; one before it is, and throws there
      this.#pending.set(this.#issued++, read);
    }
    const read = this.#pending.get(sequence);
    assert(read !== undefined, `WAL object ${sequence} of ${this.#stream.writerId}/${this.#stream.epoch} is read out of order`);
    this.#pending.delete(sequence);
    return read;
  }

  /** Past the seal (or on a failure): the reads still in flight are not applied, only waited for (no stray GETs outlive the rebuild). */
  async abandon(): Promise<void> {
    const left = [...this.#pending.values()];
    this.#pending.clear();
    await Promise.allSettled(left);
  }
}
