import { CorruptObjectError, FerryError } from '../errors.ts';
import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import { type BackoffPolicy, backoffDelayMs, sleep } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import type { Uuid } from '../util/uuid.ts';
import { decodeFooter, decodeFrame, decodeHeader, decodeTrailer, decodeWalObject, TRAILER_BYTES, type WalFrameEntry, type WalHeader } from './format.ts';
import { highestFloorMark, listSequences } from './floor.ts';
import { type StreamId, walObjectKey } from './keys.ts';

export interface WalReaderConfig {
  readonly prefix: string;
  /**
   * Which partitions this reader applies, of which incarnation of their topic (its id); frames of
   * others are never fetched when avoidable.
   */
  readonly wants: (topic: string, partition: number, topicId: Uuid) => boolean;
  /** Bytes read from an object's end first: small objects come whole in this one read. */
  readonly tailProbeBytes: number;
  /** Neighbouring wanted frames closer than this are read in one range GET (fewer requests). */
  readonly rangeMergeGapBytes: number;
  /** Refetches of an object that failed verification or hit store faults, with backoff. */
  readonly retry: BackoffPolicy;
  /**
   * `wants` answers true for every frame (a read replica of every partition): each object is read
   * whole in one GET, not its ends first and its frames after (three GETs for a large object,
   * issue 28's catch-up: 3.06 GETs an object where raw GETs made one).
   */
  readonly wantsEveryFrame?: boolean;
}

/**
 * Defaults: a 64 KiB tail covers the footer of any object under ~700 frames and whole objects of
 * that size; a 256 KiB merge gap trades up to that many unwanted bytes (S3 Express retrieval
 * $0.0006/GB) for one fewer GET (~2.5 ms first byte).
 */
export const DEFAULT_WAL_READER_CONFIG: Omit<WalReaderConfig, 'prefix' | 'wants'> = {
  tailProbeBytes: 64 * 1024,
  rangeMergeGapBytes: 256 * 1024,
  retry: { attempts: 10, baseMs: 5, capMs: 1000 },
};

export interface ReadFrame {
  readonly entry: WalFrameEntry;
  /** Verified batch bytes (XXH64 checked); each batch's CRC32C is checked when applied. */
  readonly data: Uint8Array;
}

export type ObjectRead =
  | { readonly kind: 'absent' }
  | { readonly kind: 'seal'; readonly header: WalHeader }
  | { readonly kind: 'data'; readonly header: WalHeader; readonly frames: ReadFrame[]; readonly sizeBytes: number; readonly bytesRead: number };

/** Header bytes to read when the header is fetched alone: fixed fields plus the longest writer id. */
const HEADER_PROBE_BYTES = 512;

/**
 * The follower side of WAL shipping: reads one object of a stream, fetching only the frames of
 * wanted partitions (tail, footer index, merged range GETs), and verifies everything it returns.
 * A corrupt or partial object is fetched again with backoff and never returned in part.
 */
export class WalReader {
  readonly config: WalReaderConfig;
  readonly #store: ObjectStore;
  readonly #clock: Clock;
  readonly #random: Random;

  constructor(store: ObjectStore, config: WalReaderConfig, deps: { clock: Clock; random: Random }) {
    this.#store = store;
    this.config = config;
    this.#clock = deps.clock;
    this.#random = deps.random;
  }

  get store(): ObjectStore {
    return this.#store;
  }

  /**
   * Reads sequence `sequence` of `stream`: absent, a seal, or its wanted frames verified. Frames
   * wholly below `fromOffset` are neither fetched nor returned (a rebuild's log holds them).
   */
  read(stream: StreamId, sequence: number, fromOffset = 0): Promise<ObjectRead> {
    if (this.config.wantsEveryFrame === true && fromOffset === 0) return this.readWhole(stream, sequence);
    return this.#verifiedRead(stream, sequence, (key) => this.#readOnce(key, fromOffset));
  }

  /**
   * The whole object in one GET, every frame of it verified and returned (`wants` is not asked):
   * what reads shared by many partitions fetch ([K7], src/wal/shared-reads.ts), where a footer
   * first and ranges after would cost up to three GETs for bytes all wanted anyway.
   */
  readWhole(stream: StreamId, sequence: number): Promise<ObjectRead> {
    return this.#verifiedRead(stream, sequence, (key) => this.#readWholeOnce(key));
  }

  /** One read of the object at `stream`/`sequence`, its identity checked, fetched again with backoff when corrupt or on a transient store fault. */
  async #verifiedRead(stream: StreamId, sequence: number, readOnce: (key: string) => Promise<ObjectRead>): Promise<ObjectRead> {
    const key = walObjectKey(this.config.prefix, stream, sequence);
    for (let attempt = 0; ; attempt++) {
      try {
        const read = await readOnce(key);
        if (read.kind !== 'absent') checkIdentity(key, read.header, stream, sequence);
        return read;
      } catch (error) {
        const transient = error instanceof CorruptObjectError || (isStoreError(error) && error.retriable);
        if (!transient || attempt + 1 >= this.config.retry.attempts) {
          throw error instanceof FerryError ? error : new FerryError('Storage', `reading WAL object ${key} failed after ${attempt + 1} attempts: ${String(error)}`, { cause: error });
        }
        await sleep(this.#clock, backoffDelayMs(this.config.retry, attempt, this.#random));
      }
    }
  }

  /** The stream's sequences at or above its highest floor mark: one LIST made now (listSequences). */
  list(stream: StreamId): Promise<ReadonlySet<number>> {
    return listSequences(this.#store, this.config.prefix, stream);
  }

  /** A reader of its own shares no LIST: each is made now. */
  listFresh(stream: StreamId): Promise<ReadonlySet<number>> {
    return this.list(stream);
  }

  /**
   * [F2] Whether the seal a read found at `sequence` is void: below the stream's highest floor mark,
   * it sits in a prefix WAL GC collected after its sealer listed, below objects the writer
   * acknowledged, and ends nothing. A valid seal stays valid: GC never marks above a seal.
   */
  async sealIsVoid(stream: StreamId, sequence: number): Promise<boolean> {
    return (await highestFloorMark(this.#store, this.config.prefix, stream)) > sequence;
  }

  /**
   * The footer index of one object (no frame data): what a restarting leader needs to learn
   * which offsets its previous streams hold. Verified like `read`.
   */
  async readIndex(stream: StreamId, sequence: number): Promise<{ kind: 'absent' } | { kind: 'seal' } | { kind: 'data'; entries: WalFrameEntry[] }> {
    const key = walObjectKey(this.config.prefix, stream, sequence);
    for (let attempt = 0; ; attempt++) {
      try {
        const tail = await this.#tail(key);
        if (tail === null) return { kind: 'absent' };
        const header = decodeHeader(tail.head);
        checkIdentity(key, header, stream, sequence);
        if (header.kind === 'seal') return { kind: 'seal' };
        if (tail.body.length === tail.size) return { kind: 'data', entries: decodeWalObject(tail.body).frames.map((frame) => frame.entry) };
        const trailer = decodeTrailer(tail.body.subarray(tail.body.length - TRAILER_BYTES), tail.size);
        const footerStart = trailer.footerPosition - (tail.size - tail.body.length);
        const footer =
          footerStart >= 0 ? tail.body.subarray(footerStart, footerStart + trailer.footerLength) : (await this.#range(key, trailer.footerPosition, trailer.footerPosition + trailer.footerLength)).body;
        return { kind: 'data', entries: decodeFooter(footer, trailer.footerPosition, trailer.footerChecksum) };
      } catch (error) {
        const transient = error instanceof CorruptObjectError || (isStoreError(error) && error.retriable);
        if (!transient || attempt + 1 >= this.config.retry.attempts) throw error;
        await sleep(this.#clock, backoffDelayMs(this.config.retry, attempt, this.#random));
      }
    }
  }

  async #readWholeOnce(key: string): Promise<ObjectRead> {
    let body: Uint8Array;
    try {
      body = (await this.#store.get(key)).body;
    } catch (error) {
      if (isStoreError(error, 'NotFound')) return { kind: 'absent' };
      throw error;
    }
    const object = decodeWalObject(body);
    if (object.header.kind === 'seal') return { kind: 'seal', header: object.header };
    return { kind: 'data', header: object.header, frames: object.frames, sizeBytes: body.length, bytesRead: body.length };
  }

  async #readOnce(key: string, fromOffset: number): Promise<ObjectRead> {
    const wants = (entry: WalFrameEntry) => entry.lastOffset >= fromOffset && this.config.wants(entry.topic, entry.partition, entry.topicId);
    const tail = await this.#tail(key);
    if (tail === null) return { kind: 'absent' };
    const { body, size, head } = tail;
    if (body.length === size) {
      const object = decodeWalObject(body); // small object: whole in the first read, all verified
      if (object.header.kind === 'seal') return { kind: 'seal', header: object.header };
      const frames = object.frames.filter((frame) => wants(frame.entry));
      return { kind: 'data', header: object.header, frames, sizeBytes: size, bytesRead: body.length };
    }
    const trailer = decodeTrailer(body.subarray(body.length - TRAILER_BYTES), size);
    const footerStart = trailer.footerPosition - (size - body.length);
    const footer =
      footerStart >= 0 ? body.subarray(footerStart, footerStart + trailer.footerLength) : (await this.#range(key, trailer.footerPosition, trailer.footerPosition + trailer.footerLength)).body;
    const entries = decodeFooter(footer, trailer.footerPosition, trailer.footerChecksum);
    const wanted = entries.filter(wants);
    const headerEnd = entries[0]?.framePosition ?? trailer.footerPosition;
    if (headerEnd > head.length) throw new CorruptObjectError('framePosition', headerEnd, `a header cannot be longer than ${HEADER_PROBE_BYTES} bytes`);
    const tailRead = { span: { start: size - body.length, end: size }, body };
    const { header, frames, bytesRead } = await this.#readFrames(key, headerEnd, wanted, head, tailRead);
    if (header.kind === 'seal') throw new CorruptObjectError('kind', 0, 'a seal larger than its footer probe');
    return { kind: 'data', header, frames, sizeBytes: size, bytesRead: bytesRead + head.length + body.length + (footerStart >= 0 ? 0 : footer.length) };
  }

  /** The header plus every wanted frame, in as few range GETs as the merge gap allows. */
  async #readFrames(
    key: string,
    headerEnd: number,
    wanted: WalFrameEntry[],
    head: Uint8Array,
    tail: { span: Span; body: Uint8Array },
  ): Promise<{ header: WalHeader; frames: ReadFrame[]; bytesRead: number }> {
    const frameSpans = wanted.map((e) => ({ start: e.framePosition, end: e.framePosition + e.frameHeaderBytes + e.byteLength }));
    // The object's first and last bytes were read already: only frames outside both need a GET.
    const headSpan = { start: 0, end: head.length };
    const inRead = (span: Span) => span.end <= head.length || span.start >= tail.span.start;
    const spans = mergeSpans(
      frameSpans.filter((span) => !inRead(span)),
      this.config.rangeMergeGapBytes,
    );
    const fetched = await Promise.all(spans.map(async (span) => ({ span, body: (await this.#range(key, span.start, span.end)).body })));
    const reads = [{ span: headSpan, body: head }, tail, ...fetched];
    const slice = (start: number, end: number): Uint8Array => {
      const read = reads.find((r) => r.span.start <= start && end <= r.span.end)!;
      if (read.body.length !== read.span.end - read.span.start) throw new CorruptObjectError('range', read.span.start, `asked ${read.span.end - read.span.start} bytes, got ${read.body.length}`);
      return read.body.subarray(start - read.span.start, end - read.span.start);
    };
    const header = decodeHeader(slice(0, headerEnd));
    const frames = wanted.map((entry) => ({ entry, data: decodeFrame(slice(entry.framePosition, entry.framePosition + entry.frameHeaderBytes + entry.byteLength), entry) }));
    assert(headerEnd <= head.length, 'the header lies in the first read');
    return { header, frames, bytesRead: fetched.reduce((sum, r) => sum + r.body.length, 0) };
  }

  /**
   * The object's first and last tailProbeBytes (all of it when small) and its size; null when
   * absent. The first read learns the size; a large object needs a second for its footer.
   */
  async #tail(key: string): Promise<{ body: Uint8Array; size: number; head: Uint8Array } | null> {
    try {
      const first = await this.#store.get(key, { range: { start: 0, end: this.config.tailProbeBytes } });
      if (first.size <= first.body.length) return { body: first.body, size: first.size, head: first.body };
      const tailStart = Math.max(first.body.length, first.size - this.config.tailProbeBytes);
      return { body: (await this.#range(key, tailStart, first.size)).body, size: first.size, head: first.body };
    } catch (error) {
      if (isStoreError(error, 'NotFound')) return null;
      throw error;
    }
  }

  #range(key: string, start: number, end: number) {
    return this.#store.get(key, { range: { start, end } });
  }
}

/** The object must be the one its key names: the stream's epoch and sequence, and for data its writer. */
function checkIdentity(key: string, header: WalHeader, stream: StreamId, sequence: number): void {
  const mismatch =
    header.epoch !== stream.epoch
      ? `epoch ${header.epoch}`
      : header.sequence !== sequence
        ? `sequence ${header.sequence}`
        : header.kind === 'data' && header.writerId !== stream.writerId
          ? `writer ${header.writerId}`
          : null;
  if (mismatch !== null) throw new FerryError('CorruptObject', `WAL object ${key} says ${mismatch}: it is not the object its key names`);
}

interface Span {
  start: number;
  end: number;
}

/** Sorted, merged spans: two spans closer than `gapBytes` become one read. */
export function mergeSpans(spans: readonly Span[], gapBytes: number): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const merged: Span[] = [];
  for (const span of sorted) {
    const last = merged.at(-1);
    if (last !== undefined && span.start - last.end <= gapBytes) last.end = Math.max(last.end, span.end);
    else merged.push({ ...span });
  }
  return merged;
}
