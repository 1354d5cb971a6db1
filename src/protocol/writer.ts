import { assert } from '../util/assert.ts';
import { STRING_BYTES_MAX } from './reader.ts';

const INITIAL_CAPACITY_BYTES = 256;
const TWO_POW_32 = 0x1_0000_0000;
const encoder = new TextEncoder();
const NO_BYTES = new Uint8Array(0);
const NO_BYTES_VIEW = new DataView(new ArrayBuffer(0));

/**
 * A STRING's UTF-8 bytes. Kafka's readers refuse one past STRING_BYTES_MAX in every version (the
 * compact form too), and the plain form's int16 length would wrap: a longer one is a bug of its
 * writer, never sent.
 */
function stringBytes(value: string): Uint8Array {
  const bytes = encoder.encode(value);
  assert(bytes.length <= STRING_BYTES_MAX, `a string of ${bytes.length} bytes exceeds Kafka's ${STRING_BYTES_MAX}`);
  return bytes;
}

/**
 * Big-endian writes into a growing buffer, Kafka's primitive types. Large byte fields (record
 * batches in Fetch responses) can be kept as separate chunks instead of copied: see `chunks()`.
 */
export class KafkaWriter {
  /** Allocated at the first write after a flush (NO_BYTES until then): a writer that ends in a view allocates nothing more. */
  #buffer: Uint8Array = NO_BYTES;
  #view: DataView = NO_BYTES_VIEW;
  #length = 0;
  /** Finished chunks, with large views between them (zero-copy responses). */
  readonly #chunks: Uint8Array[] = [];
  #chunkedBytes = 0;
  /** The last chunk when it is a view (a later contiguous view extends it); null after encoded bytes. */
  #lastView: Uint8Array | null = null;

  get length(): number {
    return this.#chunkedBytes + this.#length;
  }

  int8(value: number): this {
    this.#ensure(1).setInt8(this.#length, value);
    this.#length += 1;
    return this;
  }

  boolean(value: boolean): this {
    return this.int8(value ? 1 : 0);
  }

  int16(value: number): this {
    this.#ensure(2).setInt16(this.#length, value);
    this.#length += 2;
    return this;
  }

  uint16(value: number): this {
    this.#ensure(2).setUint16(this.#length, value);
    this.#length += 2;
    return this;
  }

  float64(value: number): this {
    this.#ensure(8).setFloat64(this.#length, value);
    this.#length += 8;
    return this;
  }

  int32(value: number): this {
    this.#ensure(4).setInt32(this.#length, value);
    this.#length += 4;
    return this;
  }

  uint32(value: number): this {
    this.#ensure(4).setUint32(this.#length, value);
    this.#length += 4;
    return this;
  }

  int64(value: number): this {
    const view = this.#ensure(8);
    view.setInt32(this.#length, Math.floor(value / TWO_POW_32));
    view.setUint32(this.#length + 4, value >>> 0);
    this.#length += 8;
    return this;
  }

  uvarint(value: number): this {
    let rest = value;
    while (rest >= 0x80) {
      this.int8((rest & 0x7f) | 0x80);
      rest = Math.floor(rest / 128);
    }
    return this.int8(rest);
  }

  uuid(value: Uint8Array): this {
    return this.raw(value);
  }

  string(value: string): this {
    const bytes = stringBytes(value);
    return this.int16(bytes.length).raw(bytes);
  }

  nullableString(value: string | null): this {
    return value === null ? this.int16(-1) : this.string(value);
  }

  compactString(value: string): this {
    const bytes = stringBytes(value);
    return this.uvarint(bytes.length + 1).raw(bytes);
  }

  compactNullableString(value: string | null): this {
    return value === null ? this.uvarint(0) : this.compactString(value);
  }

  nullableBytes(value: Uint8Array | null): this {
    return value === null ? this.int32(-1) : this.int32(value.length).raw(value);
  }

  compactNullableBytes(value: Uint8Array | null): this {
    return value === null ? this.uvarint(0) : this.uvarint(value.length + 1).raw(value);
  }

  array<T>(items: readonly T[], writeItem: (writer: this, item: T) => void): this {
    this.int32(items.length);
    for (const item of items) writeItem(this, item);
    return this;
  }

  nullableArray<T>(items: readonly T[] | null, writeItem: (writer: this, item: T) => void): this {
    return items === null ? this.int32(-1) : this.array(items, writeItem);
  }

  compactArray<T>(items: readonly T[], writeItem: (writer: this, item: T) => void): this {
    this.uvarint(items.length + 1);
    for (const item of items) writeItem(this, item);
    return this;
  }

  /** No tagged fields (flexible versions). */
  emptyTaggedFields(): this {
    return this.uvarint(0);
  }

  raw(bytes: Uint8Array): this {
    this.#ensure(bytes.length);
    this.#buffer.set(bytes, this.#length);
    this.#length += bytes.length;
    return this;
  }

  /**
   * Appends `bytes` without copying: the response goes out as a list of chunks. A view that
   * continues the one before it in the same memory (the next batch of one segment read) extends
   * that chunk, so a fetch's batches go out as one write per read, not one per batch.
   */
  view(bytes: Uint8Array): this {
    this.#flush();
    const last = this.#lastView;
    if (last !== null && last.byteOffset + last.byteLength === bytes.byteOffset && last.buffer === bytes.buffer) {
      this.#lastView = new Uint8Array(last.buffer, last.byteOffset, last.byteLength + bytes.byteLength);
      this.#chunks[this.#chunks.length - 1] = this.#lastView;
    } else {
      this.#lastView = bytes;
      this.#chunks.push(bytes);
    }
    this.#chunkedBytes += bytes.length;
    return this;
  }

  /** The bytes written, as chunks in order (views kept as they are). */
  chunks(): Uint8Array[] {
    this.#flush();
    return [...this.#chunks];
  }

  #flush(): void {
    if (this.#length === 0) return;
    this.#lastView = null;
    this.#chunks.push(this.#buffer.subarray(0, this.#length));
    this.#chunkedBytes += this.#length;
    this.#buffer = NO_BYTES;
    this.#view = NO_BYTES_VIEW;
    this.#length = 0;
  }

  #ensure(bytes: number): DataView {
    if (this.#length + bytes > this.#buffer.length) {
      const [grown, view] = bytesAndView(Math.max(this.#buffer.length * 2, this.#length + bytes, INITIAL_CAPACITY_BYTES));
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
      this.#view = view;
    }
    return this.#view;
  }
}

/**
 * A new buffer and a DataView on it. The ArrayBuffer comes first: asking a small Uint8Array for its
 * `.buffer` makes JavaScriptCore move it out of its inline storage, at every writer and flush.
 */
function bytesAndView(sizeBytes: number): [Uint8Array, DataView] {
  const buffer = new ArrayBuffer(sizeBytes);
  return [new Uint8Array(buffer), new DataView(buffer)];
}
