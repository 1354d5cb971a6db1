import { CorruptObjectError } from '../errors.ts';
import xxhashWasm from 'xxhash-wasm';
import { assert } from '../util/assert.ts';
import { concatBytes } from '../util/bytes.ts';

const TWO_POW_32 = 0x1_0000_0000;
const STRING_BYTES_MAX = 0xffff;
const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** XXH64 with seed 0 (docs/design.md contract 3), natively through Bun. */
export function xxh64(bytes: Uint8Array): bigint {
  return Bun.hash.xxHash64(bytes);
}

/** An XXH64 (seed 0) fed in pieces: its digest equals xxh64 of the pieces laid end to end. */
export interface Xxh64Stream {
  update(bytes: Uint8Array): void;
  digest(): bigint;
}

let createWasmStream: (() => Xxh64Stream) | null = null;

/**
 * Compiles xxhash-wasm's streaming XXH64 once per process (Bun's native hash has no streaming
 * form). Until it has resolved, xxh64Stream() keeps the pieces instead (views, no copy) and
 * hashes them joined at digest: the same value, but it holds every piece until then.
 */
export async function loadXxh64Stream(): Promise<void> {
  if (createWasmStream !== null) return;
  const { create64 } = await xxhashWasm();
  createWasmStream = () => {
    const state = create64(0n);
    return {
      update: (bytes) => void state.update(bytes),
      digest: () => state.digest(),
    };
  };
}

export function xxh64Stream(): Xxh64Stream {
  return createWasmStream?.() ?? new JoiningXxh64Stream();
}

/** The stream before loadXxh64Stream has resolved (exported for its test). */
export class JoiningXxh64Stream implements Xxh64Stream {
  readonly #pieces: Uint8Array[] = [];

  update(bytes: Uint8Array): void {
    this.#pieces.push(bytes);
  }

  digest(): bigint {
    return xxh64(joinViews(this.#pieces));
  }
}

/** The pieces as one view when they lie end to end in one buffer (one segment read), else one copy. */
function joinViews(pieces: readonly Uint8Array[]): Uint8Array {
  const first = pieces[0];
  if (first === undefined) return new Uint8Array(0);
  let end = first.byteOffset + first.length;
  for (const piece of pieces.slice(1)) {
    if (piece.buffer !== first.buffer || piece.byteOffset !== end) return concatBytes(pieces);
    end += piece.length;
  }
  return new Uint8Array(first.buffer, first.byteOffset, end - first.byteOffset);
}

/** Big-endian writes into a buffer sized up front; every write is bounds-asserted. */
export class ByteWriter {
  readonly bytes: Uint8Array;
  readonly #view: DataView;
  position = 0;

  constructor(sizeBytes: number) {
    const buffer = new ArrayBuffer(sizeBytes); // not a Uint8Array's .buffer: JavaScriptCore would move it out of its inline storage
    this.bytes = new Uint8Array(buffer);
    this.#view = new DataView(buffer);
  }

  u8(value: number): void {
    this.#view.setUint8(this.position, value);
    this.position += 1;
  }

  u16(value: number): void {
    this.#view.setUint16(this.position, value);
    this.position += 2;
  }

  u32(value: number): void {
    this.#view.setUint32(this.position, value);
    this.position += 4;
  }

  i32(value: number): void {
    this.#view.setInt32(this.position, value);
    this.position += 4;
  }

  /** A safe integer as a 64-bit two's-complement value. */
  i64(value: number): void {
    assert(Number.isSafeInteger(value), `int64 ${value} is not a safe integer`);
    this.#view.setInt32(this.position, Math.floor(value / TWO_POW_32));
    this.#view.setUint32(this.position + 4, value >>> 0);
    this.position += 8;
  }

  u64(value: bigint): void {
    this.#view.setBigUint64(this.position, value);
    this.position += 8;
  }

  /** A fixed-length field (a UUID), its bytes as they are. */
  raw(value: Uint8Array): void {
    this.bytes.set(value, this.position);
    this.position += value.length;
  }

  string(encoded: Uint8Array): void {
    this.u16(encoded.length);
    this.bytes.set(encoded, this.position);
    this.position += encoded.length;
  }
}

/** UTF-8 bytes of a string field, refusing ones too long for the u16 length prefix. */
export function encodeString(value: string): Uint8Array {
  const encoded = encoder.encode(value);
  assert(encoded.length <= STRING_BYTES_MAX, `string of ${encoded.length} bytes exceeds ${STRING_BYTES_MAX}`);
  return encoded;
}

/**
 * Big-endian reads that never trust a length: every read checks what remains and throws
 * CorruptObjectError naming the field and its absolute position in the object.
 */
export class ByteReader {
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  /** Where `bytes` starts in the whole object, so errors name object positions. */
  readonly #base: number;
  /** What errors call the bytes: the object, or the part of it that `basePosition` counts in. */
  readonly #objectName: string | undefined;
  position = 0;

  constructor(bytes: Uint8Array, basePosition = 0, objectName?: string) {
    this.#bytes = bytes;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    this.#base = basePosition;
    this.#objectName = objectName;
  }

  get objectPosition(): number {
    return this.#base + this.position;
  }

  get remaining(): number {
    return this.#bytes.length - this.position;
  }

  u8(field: string): number {
    this.#need(field, 1);
    return this.#view.getUint8(this.position++);
  }

  u16(field: string): number {
    this.#need(field, 2);
    const value = this.#view.getUint16(this.position);
    this.position += 2;
    return value;
  }

  u32(field: string): number {
    this.#need(field, 4);
    const value = this.#view.getUint32(this.position);
    this.position += 4;
    return value;
  }

  i32(field: string): number {
    this.#need(field, 4);
    const value = this.#view.getInt32(this.position);
    this.position += 4;
    return value;
  }

  i64(field: string): number {
    this.#need(field, 8);
    const value = this.#view.getInt32(this.position) * TWO_POW_32 + this.#view.getUint32(this.position + 4);
    if (!Number.isSafeInteger(value)) throw this.error(field, `${value} is outside the safe integer range`);
    this.position += 8;
    return value;
  }

  u64(field: string): bigint {
    this.#need(field, 8);
    const value = this.#view.getBigUint64(this.position);
    this.position += 8;
    return value;
  }

  string(field: string): string {
    const length = this.u16(`${field} length`);
    const bytes = this.bytes(field, length);
    try {
      return decoder.decode(bytes);
    } catch {
      throw this.error(field, 'is not valid UTF-8');
    }
  }

  /** A view (no copy) of the next `length` bytes. */
  bytes(field: string, length: number): Uint8Array {
    this.#need(field, length);
    const view = this.#bytes.subarray(this.position, this.position + length);
    this.position += length;
    return view;
  }

  error(field: string, detail: string): CorruptObjectError {
    return new CorruptObjectError(field, this.objectPosition, detail, this.#objectName);
  }

  #need(field: string, length: number): void {
    if (length > this.remaining) throw this.error(field, `needs ${length} bytes, ${this.remaining} remain`);
  }
}
