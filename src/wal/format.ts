import { assert } from '../util/assert.ts';
import { concatBytes } from '../util/bytes.ts';
import { UUID_BYTES, type Uuid, uuidFromBytes, uuidToBytes, ZERO_UUID } from '../util/uuid.ts';
import { ByteReader, ByteWriter, encodeString, xxh64 } from './bytes.ts';

/** The WAL object format of docs/wal-format.md; every constant here is a field there. */
export const WAL_MAGIC = 0x4657414c; // "FWAL"
/** 2: frames name their topic's id (docs/design.md contract 10); version 1 frames cannot tell a topic's incarnations apart. */
export const WAL_FORMAT_VERSION = 2;
export const TRAILER_BYTES = 16;
const CHECKSUM_BYTES = 8;
/** magic u32 + version u16 + kind u8 + reserved u8 + epoch u32 + sequence u64 + createdMs i64 + writerId length u16. */
const HEADER_FIXED_BYTES = 4 + 2 + 1 + 1 + 4 + 8 + 8 + 2;
/** topic length u16 + topicId 16 bytes + partition i32 + leaderEpoch i32 + baseOffset i64 + lastOffset i64 + byteLength u32 + checksum u64. */
const FRAME_FIXED_BYTES = 2 + UUID_BYTES + 4 + 4 + 8 + 8 + 4 + 8;
/** The frame fields plus framePosition u64 and frameHeaderBytes u16. */
const ENTRY_FIXED_BYTES = FRAME_FIXED_BYTES + 8 + 2;
const FRAME_COUNT_BYTES = 4;
/** Writer ids are short names (a broker id, a UUID); the u16 prefix would allow more. */
export const WRITER_ID_BYTES_MAX = 255;
/** A frame's data length is a u32. */
export const FRAME_DATA_BYTES_MAX = 0xffff_ffff;

export type WalObjectKind = 'data' | 'seal';
const KIND_CODES: Record<WalObjectKind, number> = { data: 0, seal: 1 };

export interface WalHeader {
  readonly kind: WalObjectKind;
  readonly writerId: string;
  readonly epoch: number;
  readonly sequence: number;
  readonly createdMs: number;
}

/** What the footer says of one frame; the frame header repeats all but the position fields. */
export interface WalFrameEntry {
  readonly topic: string;
  /** The topic's id: which incarnation of the name the frame belongs to (never the zero UUID). */
  readonly topicId: Uuid;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** Byte position of the frame's first field in the object. */
  readonly framePosition: number;
  readonly frameHeaderBytes: number;
  readonly byteLength: number;
  readonly dataChecksum: bigint;
}

export interface WalFrameInput {
  readonly topic: string;
  readonly topicId: Uuid;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** Whole record batches of one partition, contiguous in offsets and in memory. */
  readonly data: Uint8Array;
}

/**
 * Assembles one WAL object from frames as they come (the writer adds them while the object
 * fills). The header is final from the start, so a large object can stream out as it fills:
 * `drain` hands over the chunks made so far, `finish` the rest with the footer and trailer.
 * Frame data stay views of the caller's buffers; nothing is copied here.
 */
export class WalObjectBuilder {
  readonly #kind: WalObjectKind;
  #pending: Uint8Array[];
  readonly #entries: (WalFrameEntry & { topicBytes: Uint8Array })[] = [];
  #position: number;
  #footerBytes = FRAME_COUNT_BYTES;
  #finished = false;

  constructor(header: WalHeader) {
    this.#kind = header.kind;
    const headerChunk = encodeHeader(header);
    this.#pending = [headerChunk];
    this.#position = headerChunk.length;
  }

  get frameCount(): number {
    return this.#entries.length;
  }

  /** The object's size if it were finished now. */
  get sizeBytes(): number {
    return this.#position + this.#footerBytes + TRAILER_BYTES;
  }

  addFrame(frame: WalFrameInput): WalFrameEntry {
    assert(!this.#finished && this.#kind === 'data', 'frames go only into an unfinished data object');
    assert(frame.data.length > 0 && frame.data.length <= FRAME_DATA_BYTES_MAX, `frame data of ${frame.data.length} bytes`);
    assert(frame.lastOffset >= frame.baseOffset, `frame offsets ${frame.baseOffset}..${frame.lastOffset}`);
    assert(frame.topicId !== ZERO_UUID, `a frame of ${frame.topic} must name its topic id`);
    const topicBytes = encodeString(frame.topic);
    const frameHeaderBytes = FRAME_FIXED_BYTES + topicBytes.length;
    const { topic, topicId, partition, leaderEpoch, baseOffset, lastOffset, data } = frame;
    const entry = { topic, topicId, partition, leaderEpoch, baseOffset, lastOffset, topicBytes, framePosition: this.#position, frameHeaderBytes, byteLength: data.length, dataChecksum: xxh64(data) };
    const writer = new ByteWriter(frameHeaderBytes);
    writeFrameFields(writer, entry);
    this.#pending.push(writer.bytes, data);
    this.#entries.push(entry);
    this.#position += frameHeaderBytes + data.length;
    this.#footerBytes += ENTRY_FIXED_BYTES + topicBytes.length;
    return entry;
  }

  /** The chunks made since the last drain: the object's next bytes, in order. */
  drain(): Uint8Array[] {
    const chunks = this.#pending;
    this.#pending = [];
    return chunks;
  }

  /** The remaining chunks: undrained frames, footer, trailer. */
  finish(): Uint8Array[] {
    assert(!this.#finished, 'a WAL object is finished once');
    this.#finished = true;
    const footer = new ByteWriter(this.#footerBytes);
    footer.u32(this.#entries.length);
    for (const entry of this.#entries) {
      writeFrameFields(footer, entry);
      footer.i64(entry.framePosition);
      footer.u16(entry.frameHeaderBytes);
    }
    assert(footer.position === footer.bytes.length, 'footer size');
    const trailer = new ByteWriter(TRAILER_BYTES);
    trailer.u32(footer.bytes.length);
    trailer.u64(xxh64(footer.bytes));
    trailer.u32(WAL_MAGIC);
    return [...this.drain(), footer.bytes, trailer.bytes];
  }
}

function encodeHeader(header: WalHeader): Uint8Array {
  const writerId = encodeString(header.writerId);
  assert(writerId.length > 0 && writerId.length <= WRITER_ID_BYTES_MAX, `writer id must be 1 to ${WRITER_ID_BYTES_MAX} bytes`);
  const writer = new ByteWriter(headerBytes(writerId.length));
  writer.u32(WAL_MAGIC);
  writer.u16(WAL_FORMAT_VERSION);
  writer.u8(KIND_CODES[header.kind]);
  writer.u8(0);
  writer.u32(header.epoch);
  writer.i64(header.sequence);
  writer.i64(header.createdMs);
  writer.string(writerId);
  writer.u64(xxh64(writer.bytes.subarray(0, writer.position)));
  assert(writer.position === writer.bytes.length, 'header size');
  return writer.bytes;
}

function headerBytes(writerIdBytes: number): number {
  return HEADER_FIXED_BYTES + writerIdBytes + CHECKSUM_BYTES;
}

function writeFrameFields(writer: ByteWriter, entry: WalFrameEntry & { topicBytes: Uint8Array }): void {
  writer.string(entry.topicBytes);
  writer.raw(uuidToBytes(entry.topicId));
  writer.i32(entry.partition);
  writer.i32(entry.leaderEpoch);
  writer.i64(entry.baseOffset);
  writer.i64(entry.lastOffset);
  writer.u32(entry.byteLength);
  writer.u64(entry.dataChecksum);
}

/** Encodes a seal: a frameless object a successor writes into its predecessor's stream. */
export function encodeSeal(header: Omit<WalHeader, 'kind'>): Uint8Array {
  return concatBytes(new WalObjectBuilder({ ...header, kind: 'seal' }).finish());
}

/** Reads the header at the start of an object (or of a prefix of it). */
export function decodeHeader(bytes: Uint8Array): WalHeader & { headerBytes: number } {
  const reader = new ByteReader(bytes);
  const magic = reader.u32('magic');
  if (magic !== WAL_MAGIC) throw reader.error('magic', `0x${magic.toString(16)} is not 0x${WAL_MAGIC.toString(16)}`);
  const version = reader.u16('formatVersion');
  if (version !== WAL_FORMAT_VERSION) throw reader.error('formatVersion', `version ${version} is not supported (this reader knows ${WAL_FORMAT_VERSION})`);
  const kindCode = reader.u8('kind');
  const kind = (Object.keys(KIND_CODES) as WalObjectKind[]).find((k) => KIND_CODES[k] === kindCode);
  if (kind === undefined) throw reader.error('kind', `unknown kind ${kindCode}`);
  reader.u8('reserved');
  const epoch = reader.u32('epoch');
  const sequence = reader.i64('sequence');
  const createdMs = reader.i64('createdMs');
  const writerId = reader.string('writerId');
  const checked = reader.position;
  const checksum = reader.u64('headerChecksum');
  const actual = xxh64(bytes.subarray(0, checked));
  if (checksum !== actual) throw reader.error('headerChecksum', `expected ${hex(checksum)}, computed ${hex(actual)}`);
  return { kind, writerId, epoch, sequence, createdMs, headerBytes: reader.position };
}

/** Reads the trailer from the object's last TRAILER_BYTES; returns where the footer starts. */
export function decodeTrailer(trailer: Uint8Array, objectSizeBytes: number): { footerPosition: number; footerLength: number; footerChecksum: bigint } {
  const reader = new ByteReader(trailer, objectSizeBytes - trailer.length);
  if (trailer.length !== TRAILER_BYTES) throw reader.error('trailer', `needs ${TRAILER_BYTES} bytes, got ${trailer.length}`);
  const footerLength = reader.u32('footerLength');
  const footerChecksum = reader.u64('footerChecksum');
  const magic = reader.u32('trailer magic');
  if (magic !== WAL_MAGIC) throw reader.error('trailer magic', `0x${magic.toString(16)} is not 0x${WAL_MAGIC.toString(16)}`);
  const footerPosition = objectSizeBytes - TRAILER_BYTES - footerLength;
  if (footerPosition < HEADER_FIXED_BYTES) throw reader.error('footerLength', `${footerLength} does not fit in an object of ${objectSizeBytes} bytes`);
  return { footerPosition, footerLength, footerChecksum };
}

/** Verifies and reads the footer index; `footerPosition` is its byte in the object. */
export function decodeFooter(footer: Uint8Array, footerPosition: number, footerChecksum: bigint): WalFrameEntry[] {
  const reader = new ByteReader(footer, footerPosition);
  const actual = xxh64(footer);
  if (actual !== footerChecksum) throw reader.error('footerChecksum', `expected ${hex(footerChecksum)}, computed ${hex(actual)}`);
  const frameCount = reader.u32('frameCount');
  // Each entry takes at least ENTRY_FIXED_BYTES: refuse a count the footer cannot hold before allocating.
  if (frameCount * ENTRY_FIXED_BYTES > reader.remaining) throw reader.error('frameCount', `${frameCount} entries cannot fit in ${reader.remaining} bytes`);
  const entries: WalFrameEntry[] = [];
  let expectedPosition = -1;
  for (let i = 0; i < frameCount; i++) {
    const entry = readEntry(reader);
    if (expectedPosition >= 0 && entry.framePosition !== expectedPosition) throw reader.error('framePosition', `frame ${i} at ${entry.framePosition}, expected ${expectedPosition}`);
    if (entry.framePosition + entry.frameHeaderBytes + entry.byteLength > footerPosition) throw reader.error('framePosition', `frame ${i} runs into the footer`);
    expectedPosition = entry.framePosition + entry.frameHeaderBytes + entry.byteLength;
    entries.push(entry);
  }
  if (reader.remaining !== 0) throw reader.error('footer', `${reader.remaining} bytes after the last entry`);
  return entries;
}

function readEntry(reader: ByteReader): WalFrameEntry {
  const fields = readFrameFields(reader);
  const framePosition = reader.i64('framePosition');
  const frameHeaderBytes = reader.u16('frameHeaderBytes');
  if (fields.lastOffset < fields.baseOffset) throw reader.error('lastOffset', `${fields.lastOffset} is below baseOffset ${fields.baseOffset}`);
  return { ...fields, framePosition, frameHeaderBytes };
}

function readTopicId(reader: ByteReader): Uuid {
  const topicId = uuidFromBytes(reader.bytes('topicId', UUID_BYTES));
  if (topicId === ZERO_UUID) throw reader.error('topicId', 'is the zero UUID; every frame names its topic id');
  return topicId;
}

function readFrameFields(reader: ByteReader): Omit<WalFrameEntry, 'framePosition' | 'frameHeaderBytes'> {
  return {
    topic: reader.string('topic'),
    topicId: readTopicId(reader),
    partition: reader.i32('partition'),
    leaderEpoch: reader.i32('leaderEpoch'),
    baseOffset: reader.i64('baseOffset'),
    lastOffset: reader.i64('lastOffset'),
    byteLength: reader.u32('byteLength'),
    dataChecksum: reader.u64('dataChecksum'),
  };
}

/**
 * Verifies one frame read at `entry.framePosition` (`bytes` = its header and data) against its
 * footer entry and returns the data as a view of `bytes`.
 */
export function decodeFrame(bytes: Uint8Array, entry: WalFrameEntry): Uint8Array {
  const reader = new ByteReader(bytes, entry.framePosition);
  const fields = readFrameFields(reader);
  for (const name of ['topic', 'topicId', 'partition', 'leaderEpoch', 'baseOffset', 'lastOffset', 'byteLength', 'dataChecksum'] as const) {
    if (fields[name] !== entry[name]) throw reader.error(name, `frame says ${String(fields[name])}, footer says ${String(entry[name])}`);
  }
  if (reader.position !== entry.frameHeaderBytes) throw reader.error('frameHeaderBytes', `frame header is ${reader.position} bytes, footer says ${entry.frameHeaderBytes}`);
  const data = reader.bytes('data', entry.byteLength);
  const actual = xxh64(data);
  if (actual !== entry.dataChecksum) throw reader.error('dataChecksum', `expected ${hex(entry.dataChecksum)}, computed ${hex(actual)}`);
  return data;
}

export interface DecodedWalObject {
  readonly header: WalHeader;
  readonly frames: { readonly entry: WalFrameEntry; readonly data: Uint8Array }[];
}

/** Verifies and decodes a whole object held in memory; frame data are views of `bytes`. */
export function decodeWalObject(bytes: Uint8Array): DecodedWalObject {
  const { headerBytes: headerLength, ...header } = decodeHeader(bytes);
  const trailer = decodeTrailer(bytes.subarray(Math.max(0, bytes.length - TRAILER_BYTES)), bytes.length);
  const footer = bytes.subarray(trailer.footerPosition, trailer.footerPosition + trailer.footerLength);
  const entries = decodeFooter(footer, trailer.footerPosition, trailer.footerChecksum);
  const firstFrame = entries[0]?.framePosition ?? trailer.footerPosition;
  if (firstFrame !== headerLength) throw new ByteReader(bytes).error('framePosition', `first frame at ${firstFrame}, header ends at ${headerLength}`);
  const last = entries.at(-1);
  const framesEnd = last === undefined ? headerLength : last.framePosition + last.frameHeaderBytes + last.byteLength;
  if (framesEnd !== trailer.footerPosition) throw new ByteReader(bytes).error('footerLength', `frames end at ${framesEnd}, footer starts at ${trailer.footerPosition}`);
  if (header.kind === 'seal' && entries.length > 0) throw new ByteReader(bytes).error('kind', 'a seal carries no frames');
  const frames = entries.map((entry) => ({ entry, data: decodeFrame(bytes.subarray(entry.framePosition, entry.framePosition + entry.frameHeaderBytes + entry.byteLength), entry) }));
  return { header, frames };
}

function hex(value: bigint): string {
  return `0x${value.toString(16).padStart(16, '0')}`;
}
