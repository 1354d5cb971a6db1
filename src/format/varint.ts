/**
 * Kafka's zigzag varints (ByteUtils.readVarint / readVarlong): protobuf base-128, low group
 * first, with the sign folded into bit 0 so small negative numbers stay short.
 *
 * Readers take a reusable `VarintCursor` and advance its `position`, so decoding a batch of
 * records allocates nothing per field. Every read is bounded by `cursor.end` (the end of the
 * enclosing record, not of the buffer) and by the longest legal encoding, and a violation is a
 * CorruptRecordError naming the field.
 */
import { CorruptRecordError } from '../errors.ts';
import { assert } from '../util/assert.ts';

/** An int32 needs at most ceil(32 / 7) groups. */
export const VARINT_MAX_BYTES = 5;
/** An int64 needs at most ceil(64 / 7) groups. */
export const VARLONG_MAX_BYTES = 10;

const GROUP_BITS = 7;
const GROUP_MASK = 0x7f;
const CONTINUATION_BIT = 0x80;
const TWO_POW_7 = 128;
/** A safe integer's zigzag form needs at most 54 bits, i.e. 8 groups. */
const VARLONG_SAFE_MAX_BYTES = 8;

/** Where the next read starts, where reading must stop, and what errors report as `position`. */
export class VarintCursor {
  position: number;
  /** One past the last byte the reader may consume. */
  end: number;
  /** The `position` errors carry: the start of the enclosing batch in its source buffer. */
  errorPosition: number;

  constructor(position = 0, end = 0, errorPosition = 0) {
    this.position = position;
    this.end = end;
    this.errorPosition = errorPosition;
  }

  reset(position: number, end: number, errorPosition: number): void {
    this.position = position;
    this.end = end;
    this.errorPosition = errorPosition;
  }
}

function truncated(cursor: VarintCursor, field: string, start: number): CorruptRecordError {
  return new CorruptRecordError(field, cursor.errorPosition, `varint at byte ${start} runs past byte ${cursor.end}`);
}

function tooLong(cursor: VarintCursor, field: string, start: number, maxBytes: number): CorruptRecordError {
  return new CorruptRecordError(field, cursor.errorPosition, `varint at byte ${start} is longer than ${maxBytes} bytes`);
}

/**
 * Reads a zigzag int32. Like Kafka, bits above 32 in the fifth byte are dropped rather than
 * rejected, so Ferry accepts exactly what Kafka accepts.
 */
export function readVarint(bytes: Uint8Array, cursor: VarintCursor, field: string): number {
  const start = cursor.position;
  const end = Math.min(cursor.end, bytes.length);
  let raw = 0;
  for (let index = 0; index < VARINT_MAX_BYTES; index++) {
    const position = start + index;
    if (position >= end) throw truncated(cursor, field, start);
    const byte = bytes[position]!;
    raw |= (byte & GROUP_MASK) << (GROUP_BITS * index);
    if ((byte & CONTINUATION_BIT) === 0) {
      cursor.position = position + 1;
      return (raw >>> 1) ^ -(raw & 1);
    }
  }
  throw tooLong(cursor, field, start, VARINT_MAX_BYTES);
}

/**
 * Reads a zigzag int64 as a number. Values outside ±(2^53 - 1) are legal Kafka but cannot be a
 * JS number; Ferry treats them as corrupt (no real timestamp delta comes near).
 */
export function readVarlong(bytes: Uint8Array, cursor: VarintCursor, field: string): number {
  const start = cursor.position;
  const end = Math.min(cursor.end, bytes.length);
  if (start >= end) throw truncated(cursor, field, start);
  const first = bytes[start]!;
  const negative = (first & 1) === 1;
  // Accumulate the magnitude (raw >>> 1) directly: raw itself may need 54 bits, one too many.
  let magnitude = (first & GROUP_MASK) >>> 1;
  let scale = 1 << (GROUP_BITS - 1);
  let byte = first;
  let position = start + 1;
  while ((byte & CONTINUATION_BIT) !== 0) {
    if (position - start >= VARLONG_MAX_BYTES) throw tooLong(cursor, field, start, VARLONG_MAX_BYTES);
    if (position >= end) throw truncated(cursor, field, start);
    byte = bytes[position++]!;
    magnitude += (byte & GROUP_MASK) * scale;
    scale *= TWO_POW_7;
  }
  cursor.position = position;
  const value = negative ? -magnitude - 1 : magnitude;
  if (!Number.isSafeInteger(value)) {
    throw new CorruptRecordError(field, cursor.errorPosition, `varlong at byte ${start} is outside the safe integer range`);
  }
  return value;
}

/** Bytes `writeVarint(value)` takes. */
export function sizeOfVarint(value: number): number {
  let raw = ((value << 1) ^ (value >> 31)) >>> 0;
  let size = 1;
  while (raw > GROUP_MASK) {
    raw >>>= GROUP_BITS;
    size++;
  }
  return size;
}

/** Writes a zigzag int32 at `position`; returns the position after it. */
export function writeVarint(value: number, bytes: Uint8Array, position: number): number {
  assert(value === (value | 0), `varint ${value} is not an int32`);
  let raw = ((value << 1) ^ (value >> 31)) >>> 0;
  while (raw > GROUP_MASK) {
    bytes[position++] = (raw & GROUP_MASK) | CONTINUATION_BIT;
    raw >>>= GROUP_BITS;
  }
  bytes[position++] = raw;
  return position;
}

/** Bytes `writeVarlong(value)` takes. */
export function sizeOfVarlong(value: number): number {
  // Zigzag raw = 2 * magnitude + sign; the first group holds six magnitude bits.
  let magnitude = value < 0 ? -value - 1 : value;
  let size = 1;
  magnitude = Math.floor(magnitude / (1 << (GROUP_BITS - 1)));
  while (magnitude > 0) {
    magnitude = Math.floor(magnitude / TWO_POW_7);
    size++;
  }
  return size;
}

/** Writes a zigzag int64 (a safe integer) at `position`; returns the position after it. */
export function writeVarlong(value: number, bytes: Uint8Array, position: number): number {
  assert(Number.isSafeInteger(value), `varlong ${value} is not a safe integer`);
  if (value === (value | 0)) return writeVarint(value, bytes, position);
  // Wider than int32: split by division, since bitwise operators truncate to 32 bits.
  const negative = value < 0;
  let magnitude = negative ? -value - 1 : value;
  const low = magnitude % (1 << (GROUP_BITS - 1));
  magnitude = (magnitude - low) / (1 << (GROUP_BITS - 1));
  bytes[position++] = (low << 1) | (negative ? 1 : 0) | CONTINUATION_BIT;
  for (let count = 1; count < VARLONG_SAFE_MAX_BYTES; count++) {
    const group = magnitude % TWO_POW_7;
    magnitude = (magnitude - group) / TWO_POW_7;
    if (magnitude === 0) {
      bytes[position++] = group;
      return position;
    }
    bytes[position++] = group | CONTINUATION_BIT;
  }
  assert(false, `varlong ${value} needs more than ${VARLONG_SAFE_MAX_BYTES} bytes`);
}
