import { ProtocolError } from './errors.ts';

/**
 * Limits on what a request may declare; every length and count read off the wire is checked
 * against what remains and against these before anything is allocated (STYLE.md 2).
 */
export const ARRAY_LENGTH_MAX = 100_000;
export const STRING_BYTES_MAX = 32_767;
const TWO_POW_32 = 0x1_0000_0000;
/** A Kafka unsigned varint is at most 5 bytes (35 bits; Kafka's lengths and tags are int32). */
const UVARINT_BYTES_MAX = 5;
const decoder = new TextDecoder('utf-8', { fatal: true });

/** Big-endian reads over one request frame, Kafka's primitive types, zero-copy for bytes. */
export class KafkaReader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  position: number;

  constructor(bytes: Uint8Array, position = 0) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.position = position;
  }

  get remaining(): number {
    return this.#bytes.length - this.position;
  }

  int8(): number {
    this.#need(1, 'int8');
    return this.#view.getInt8(this.position++);
  }

  boolean(): boolean {
    return this.int8() !== 0;
  }

  int16(): number {
    this.#need(2, 'int16');
    const value = this.#view.getInt16(this.position);
    this.position += 2;
    return value;
  }

  uint16(): number {
    this.#need(2, 'uint16');
    const value = this.#view.getUint16(this.position);
    this.position += 2;
    return value;
  }

  float64(): number {
    this.#need(8, 'float64');
    const value = this.#view.getFloat64(this.position);
    this.position += 8;
    return value;
  }

  int32(): number {
    this.#need(4, 'int32');
    const value = this.#view.getInt32(this.position);
    this.position += 4;
    return value;
  }

  uint32(): number {
    this.#need(4, 'uint32');
    const value = this.#view.getUint32(this.position);
    this.position += 4;
    return value;
  }

  /** int64 as a number; Kafka's offsets, timestamps and producer ids fit in 53 bits. */
  int64(): number {
    this.#need(8, 'int64');
    const value = this.#view.getInt32(this.position) * TWO_POW_32 + this.#view.getUint32(this.position + 4);
    this.position += 8;
    if (!Number.isSafeInteger(value)) throw new ProtocolError(`int64 ${value} is outside the supported range`, this.position - 8);
    return value;
  }

  uuid(): Uint8Array {
    return this.#take(16, 'uuid');
  }

  /** Unsigned varint (flexible versions' lengths and tags). */
  uvarint(): number {
    const bytes = this.#bytes;
    let value = 0;
    let multiplier = 1;
    for (let read = 0; read < UVARINT_BYTES_MAX; read++) {
      if (this.position >= bytes.length) throw new ProtocolError(`uvarint needs 1 bytes, 0 remain`, this.position);
      const byte = bytes[this.position++]!;
      value += (byte & 0x7f) * multiplier;
      if ((byte & 0x80) === 0) return value;
      multiplier *= 0x80;
    }
    throw new ProtocolError('unsigned varint longer than 5 bytes', this.position);
  }

  string(): string {
    const value = this.nullableString();
    if (value === null) throw new ProtocolError('null where a string is required', this.position);
    return value;
  }

  nullableString(): string | null {
    return this.#text(this.int16());
  }

  compactString(): string {
    const value = this.compactNullableString();
    if (value === null) throw new ProtocolError('null where a string is required', this.position);
    return value;
  }

  compactNullableString(): string | null {
    return this.#text(this.uvarint() - 1);
  }

  /** A view of the request's bytes (no copy): record batches travel on from here. */
  nullableBytes(): Uint8Array | null {
    const length = this.int32();
    return length < 0 ? null : this.#take(length, 'bytes');
  }

  compactNullableBytes(): Uint8Array | null {
    const length = this.uvarint() - 1;
    return length < 0 ? null : this.#take(length, 'bytes');
  }

  /** Array length, checked: each element takes at least `elementBytesMin` bytes of what remains. */
  arrayLength(elementBytesMin = 1): number {
    return this.#checkLength(this.int32(), elementBytesMin);
  }

  compactArrayLength(elementBytesMin = 1): number {
    return this.#checkLength(this.uvarint() - 1, elementBytesMin);
  }

  array<T>(readElement: (reader: KafkaReader) => T, elementBytesMin = 1): T[] {
    const length = this.arrayLength(elementBytesMin);
    return Array.from({ length: Math.max(0, length) }, () => readElement(this));
  }

  compactArray<T>(readElement: (reader: KafkaReader) => T, elementBytesMin = 1): T[] {
    const length = this.compactArrayLength(elementBytesMin);
    return Array.from({ length: Math.max(0, length) }, () => readElement(this));
  }

  /** Skips a flexible version's tagged fields (none are understood yet). */
  skipTaggedFields(): void {
    const count = this.#checkLength(this.uvarint(), 2);
    for (let i = 0; i < count; i++) {
      this.uvarint();
      this.#take(this.uvarint(), 'tagged field');
    }
  }

  #text(length: number): string | null {
    if (length < 0) return null;
    if (length > STRING_BYTES_MAX) throw new ProtocolError(`string of ${length} bytes exceeds ${STRING_BYTES_MAX}`, this.position);
    const bytes = this.#take(length, 'string');
    try {
      return decoder.decode(bytes);
    } catch {
      throw new ProtocolError('string is not valid UTF-8', this.position - length);
    }
  }

  #checkLength(length: number, elementBytesMin: number): number {
    if (length < -1) throw new ProtocolError(`negative length ${length}`, this.position);
    if (length > ARRAY_LENGTH_MAX) throw new ProtocolError(`array of ${length} elements exceeds ${ARRAY_LENGTH_MAX}`, this.position);
    if (length * elementBytesMin > this.remaining) throw new ProtocolError(`array of ${length} elements cannot fit in ${this.remaining} bytes`, this.position);
    return length;
  }

  #take(length: number, what: string): Uint8Array {
    this.#need(length, what);
    const view = this.#bytes.subarray(this.position, this.position + length);
    this.position += length;
    return view;
  }

  #need(length: number, what: string): void {
    if (length > this.remaining) throw new ProtocolError(`${what} needs ${length} bytes, ${this.remaining} remain`, this.position);
  }
}
