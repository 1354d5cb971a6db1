import { decodeControlRecord } from '../control/control-record.ts';
import { BATCH_LENGTH_OFFSET, LOG_OVERHEAD_BYTES } from '../format/record-batch.ts';
import { type TierRecord, tieredEnd } from '../tier/tier-record.ts';
import { decodeFooter, decodeTrailer, TRAILER_BYTES } from '../wal/format.ts';
import { parseWalObjectKey } from '../wal/keys.ts';

/** A tier record's key among the control records (tier-audit.ts reads the same). */
const TIER_RECORD_KEY = /^control\/tier\/([^/]+)\/(\d+)$/;

/** A WAL frame holding more than one batch: only such a frame can have a tier end inside it (a tier end is a batch boundary). */
interface MultiBatchFrame {
  readonly baseOffset: number;
  readonly lastOffset: number;
}

/** What a run's WAL frames and tier ends did (the run's stats: `--seed` prints them, a range sums them). */
export interface FrameStraddleStats {
  /** WAL data objects written, and frames in them that hold more than one batch. */
  readonly walObjects: number;
  readonly multiBatchFrames: number;
  /** Tier record writes that moved a partition's tier end (TE). */
  readonly tierEndMoves: number;
  /** Of those, the ones whose new TE fell inside a frame still in the WAL store (base < TE <= last): WAL GC must keep that frame whole. */
  readonly tierEndsInsideFrames: number;
}

/**
 * Counts how often a partition's tier end falls inside a WAL frame still in the store (issue 25,
 * item 2): the case where GC's comparison of a frame's last offset against TE (GI1) meets a frame
 * tiered only in part. Watches the shared stores' puts and deletes as they take effect; decodes
 * only the footers of WAL objects, and keeps only their multi-batch frames (few). Reads nothing
 * through a broker and changes nothing.
 */
export class FrameStraddles {
  /** WAL object key -> its multi-batch frames, by partition (`topicId/partition`). */
  readonly #objects = new Map<string, Map<string, MultiBatchFrame[]>>();
  readonly #tierEnds = new Map<string, number>();
  #walObjects = 0;
  #multiBatchFrames = 0;
  #tierEndMoves = 0;
  #tierEndsInsideFrames = 0;

  get stats(): FrameStraddleStats {
    return { walObjects: this.#walObjects, multiBatchFrames: this.#multiBatchFrames, tierEndMoves: this.#tierEndMoves, tierEndsInsideFrames: this.#tierEndsInsideFrames };
  }

  /** A put took effect in the WAL store or the control store (any key). */
  put(key: string, body: Uint8Array): void {
    const tier = TIER_RECORD_KEY.exec(key);
    if (tier !== null) return this.#tierRecord(`${tier[1]}/${tier[2]}`, body);
    if (parseWalObjectKey('', key) === null || body.length < TRAILER_BYTES) return;
    let entries: ReturnType<typeof decodeFooter>;
    try {
      const { footerPosition, footerLength, footerChecksum } = decodeTrailer(body.subarray(body.length - TRAILER_BYTES), body.length);
      entries = decodeFooter(body.subarray(footerPosition, footerPosition + footerLength), footerPosition, footerChecksum);
    } catch {
      return; // a seal (no footer), or bytes a fault tore: nothing to count
    }
    this.#walObjects++;
    const frames = new Map<string, MultiBatchFrame[]>();
    for (const entry of entries) {
      const dataAt = entry.framePosition + entry.frameHeaderBytes;
      const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
      const firstBatchBytes = LOG_OVERHEAD_BYTES + view.getInt32(dataAt + BATCH_LENGTH_OFFSET);
      if (firstBatchBytes >= entry.byteLength) continue;
      this.#multiBatchFrames++;
      const partition = `${entry.topicId}/${entry.partition}`;
      const list = frames.get(partition) ?? [];
      list.push({ baseOffset: entry.baseOffset, lastOffset: entry.lastOffset });
      frames.set(partition, list);
    }
    if (frames.size > 0) this.#objects.set(key, frames);
  }

  /** A delete took effect in the WAL store. */
  deleted(key: string): void {
    this.#objects.delete(key);
  }

  #tierRecord(partition: string, body: Uint8Array): void {
    const end = tieredEnd(decodeControlRecord<TierRecord>(body).value);
    if (end === (this.#tierEnds.get(partition) ?? 0)) return;
    this.#tierEnds.set(partition, end);
    this.#tierEndMoves++;
    for (const frames of this.#objects.values()) {
      if (frames.get(partition)?.some((frame) => frame.baseOffset < end && end <= frame.lastOffset)) {
        this.#tierEndsInsideFrames++;
        return;
      }
    }
  }
}
