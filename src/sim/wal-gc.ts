import { decodeControlRecord } from '../control/control-record.ts';
import type { MemoryStore } from '../store/memory.ts';
import { type TierRecord, tieredEnd } from '../tier/tier-record.ts';
import { decodeHeader, decodeWalObject } from '../wal/format.ts';
import { FLOOR_MARK_SEGMENT, parseWalObjectKey, streamPrefix } from '../wal/keys.ts';
import type { WalDelete, WalDeletedFrame, WalRecord } from './history.ts';
import { recordsOf, type WalWrites } from './wal-audit.ts';

/** The WAL collector's interval in tiering runs: short, so that it races takeovers, follows and rebuilds. */
export const SIM_WAL_GC_INTERVAL_MS = 300;
/** Header bytes decoded to learn an object's kind: the fixed fields plus the longest writer id. */
const HEADER_PROBE_BYTES = 512;
/** The last segment of a WAL object key (walObjectKey), and of a floor mark's after FLOOR_MARK_SEGMENT (floorMarkKey). */
const SEQUENCE_SEGMENT = /^\d{20}$/;

export interface WalDeleteRecorderOptions {
  /** The shared WAL store (its deletes are recorded) and the store holding the control records (the WAL store alone). */
  readonly walStore: MemoryStore;
  readonly controlStore: MemoryStore;
  /** Simulated ms on the ops' time base. */
  nowMs(): number;
}

/**
 * Records every WAL object delete at the moment it takes effect in the shared store (MemoryStore's
 * onDelete), with what the stores held then: the stream's other objects, each frame's tier end and
 * whether its incarnation's deletion record stood. Reads nothing through a broker and changes nothing.
 */
export class WalDeleteRecorder {
  readonly deletes: WalDelete[] = [];
  /** The deleted data objects' keys and bytes: the WAL audit counts their records too (they were written, then collected). */
  readonly deletedObjects: { readonly key: string; readonly body: Uint8Array }[] = [];
  readonly #options: WalDeleteRecorderOptions;
  /** Each WAL object's kind once decoded (objects never change under a key): a delete looks at every other object of its stream. */
  readonly #kinds = new Map<string, WalDelete['kind']>();

  constructor(options: WalDeleteRecorderOptions) {
    this.#options = options;
  }

  /** A delete of `key` took effect; `body` is what it held (any key: only WAL objects are kept). */
  deleted(key: string, body: Uint8Array): void {
    const parsed = parseWalObjectKey('', key);
    if (parsed === null) return;
    const { stream, sequence } = parsed;
    const present: number[] = [];
    const seals: number[] = [];
    let floorMark = 0;
    // Every key under the stream's prefix is of its writer and epoch: only the part after it is parsed (this runs at every delete).
    const prefix = streamPrefix('', stream);
    for (const other of this.#options.walStore.peekKeys(prefix)) {
      const rest = other.slice(prefix.length);
      if (rest.startsWith(FLOOR_MARK_SEGMENT)) {
        const floor = sequenceOf(rest.slice(FLOOR_MARK_SEGMENT.length));
        if (floor !== null) floorMark = Math.max(floorMark, floor);
        continue;
      }
      const otherSequence = sequenceOf(rest);
      if (otherSequence === null) continue;
      present.push(otherSequence);
      if (this.#kindOf(other) === 'seal') seals.push(otherSequence);
    }
    const kind = kindOf(body);
    this.#kinds.delete(key); // a later put under this key is another object
    if (kind === 'data') this.deletedObjects.push({ key, body });
    this.deletes.push({
      atMs: this.#options.nowMs(),
      writerId: stream.writerId,
      epoch: stream.epoch,
      sequence,
      kind,
      present: present.sort((a, b) => a - b),
      seals: seals.sort((a, b) => a - b),
      floorMark,
      frames: kind === 'data' ? this.#frames(body) : [],
    });
  }

  /** A put of `key` took effect: what it holds may be another object now (a seal in a slot GC collected, [F2]). */
  written(key: string): void {
    this.#kinds.delete(key);
  }

  #kindOf(key: string): WalDelete['kind'] {
    let kind = this.#kinds.get(key);
    if (kind === undefined) this.#kinds.set(key, (kind = kindOf(this.#options.walStore.peek(key)!)));
    return kind;
  }

  #frames(body: Uint8Array): WalDeletedFrame[] {
    return decodeWalObject(body).frames.map(({ entry }) => ({
      topic: entry.topic,
      topicId: entry.topicId,
      partition: entry.partition,
      lastOffset: entry.lastOffset,
      tieredEnd: this.#tieredEnd(entry.topicId, entry.partition),
      incarnationDeleted: this.#incarnationDeleted(entry.topicId),
    }));
  }

  #tieredEnd(topicId: string, partition: number): number {
    const record = this.#options.controlStore.peek(`control/tier/${topicId}/${partition}`);
    return record === null ? 0 : tieredEnd(decodeControlRecord<TierRecord>(record).value);
  }

  /** DI1: the incarnation's deletion record, as the control store holds it (a lone broker's too: a cluster of one). */
  #incarnationDeleted(topicId: string): boolean {
    return this.#options.controlStore.peek(`control/deleted-topics/${topicId}`) !== null;
  }
}

/** A sequence as WAL keys write it (keys.ts: 20 digits), or null for anything else. */
function sequenceOf(segment: string): number | null {
  return SEQUENCE_SEGMENT.test(segment) ? Number(segment) : null;
}

function kindOf(body: Uint8Array): WalDelete['kind'] {
  try {
    return decodeHeader(body.subarray(0, HEADER_PROBE_BYTES)).kind;
  } catch {
    return 'unreadable';
  }
}

/**
 * The records of every WAL object the collector deleted during the run, as the audit lists those
 * the store still holds: an object GC took was durable all the same, and ack-after-durable judges
 * an acknowledgement by the first write of an object holding it, wherever that object is now.
 */
export function deletedWalRecords(recorder: WalDeleteRecorder, writes: WalWrites, startMs: number): WalRecord[] {
  const records: WalRecord[] = [];
  for (const { key, body } of recorder.deletedObjects) {
    const settledMs = writes.firstSettledMs(key, body);
    if (settledMs !== undefined) records.push(...recordsOf(body, settledMs - startMs));
  }
  return records;
}
