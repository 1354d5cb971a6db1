/**
 * Kafka's compression codecs (attributes bits 0-2) and the ones Ferry can decode. Compressed
 * batches are stored and shipped as received (docs/design.md contract 1); decoding happens only when
 * something asks for the records themselves.
 */
import zlib from 'node:zlib';
import { CorruptRecordError, FerryError } from '../errors.ts';

export type CompressionCodec = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

/** Indexed by Kafka's compression type id. */
export const COMPRESSION_CODECS: readonly CompressionCodec[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** The codecs `buildRecordBatch` can write. */
export type BuildCompressionCodec = 'none' | 'gzip' | 'zstd';

/**
 * The most a compressed batch may expand to when its records are read. A 1 MiB batch of
 * repetitive data can legitimately grow 100x; beyond this it is more likely a decompression
 * bomb, and each decode holds this much memory at worst.
 */
export const DECOMPRESSED_RECORDS_MAX_BYTES = 128 * 1024 * 1024;

export function compressionCodecOf(id: number): CompressionCodec | undefined {
  return COMPRESSION_CODECS[id];
}

export function compressionIdOf(codec: CompressionCodec): number {
  return COMPRESSION_CODECS.indexOf(codec);
}

/** Compresses a batch's records section the way Kafka's producers do (a gzip or zstd stream). */
export function compress(codec: BuildCompressionCodec, data: Uint8Array): Uint8Array {
  // Bun's typings want an ArrayBuffer-backed array; our callers' buffers are never shared.
  const input = data as Uint8Array<ArrayBuffer>;
  if (codec === 'gzip') return Bun.gzipSync(input);
  if (codec === 'zstd') return asUint8Array(Bun.zstdCompressSync(input));
  return data;
}

/**
 * Decompresses a batch's records section. node:zlib rather than Bun.gunzipSync, because Kafka's
 * Java producers may emit several gzip members and Bun.gunzipSync stops after the first.
 * `errorPosition` is the batch's position in its source buffer, for the errors.
 */
export function decompress(codec: CompressionCodec, data: Uint8Array, errorPosition: number, maxOutputBytes = DECOMPRESSED_RECORDS_MAX_BYTES): Uint8Array {
  if (codec === 'none') return data;
  if (codec === 'snappy' || codec === 'lz4') {
    throw new FerryError('InvalidArgument', `cannot decode ${codec} batch at byte ${errorPosition}: not supported yet`);
  }
  const options = { maxOutputLength: maxOutputBytes };
  try {
    const output = codec === 'gzip' ? zlib.gunzipSync(data, options) : zlib.zstdDecompressSync(data, options);
    return asUint8Array(output);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new FerryError('RecordTooLarge', `${codec} batch at byte ${errorPosition} decompresses to more than ${maxOutputBytes} bytes`, { cause: error });
    }
    throw new CorruptRecordError('records', errorPosition, `${codec} data does not decompress: ${String(error)}`);
  }
}

/** A plain Uint8Array view of a Buffer (no copy), so callers see one type whatever the codec. */
function asUint8Array(bytes: Uint8Array): Uint8Array {
  if (bytes.constructor === Uint8Array) return bytes;
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
