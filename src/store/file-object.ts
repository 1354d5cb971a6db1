import { open, rm, type FileHandle } from 'node:fs/promises';
import { assert } from '../util/assert.ts';
import { type FileSync, systemFileSync } from '../util/file-sync.ts';
import type { DirectWrites } from './direct-write.ts';
import { StoreError } from './errors.ts';
import { errnoOf } from './fs-errors.ts';

/**
 * The file store's object file: a 64-byte header, then the object's bytes.
 *
 *   0..8    magic "FERRYOB1" (the 1 is the format version)
 *   8       ETag length n (at most 55)
 *   9..9+n  ETag, ASCII
 *   ..64    zero
 *
 * The ETag travels inside the file so that head, list and compare-and-swap read 64 bytes
 * instead of hashing the whole object, and so that ETag and body are published by one rename:
 * they can never disagree. Costs 64 bytes per object.
 */
export const OBJECT_HEADER_BYTES = 64;
const MAGIC = new TextEncoder().encode('FERRYOB1');
const ETAG_OFFSET = MAGIC.length + 1;
const ETAG_BYTES_MAX = OBJECT_HEADER_BYTES - ETAG_OFFSET;

export function encodeHeader(etag: string): Uint8Array {
  const etagBytes = new TextEncoder().encode(etag);
  assert(etagBytes.length <= ETAG_BYTES_MAX && etagBytes.length === etag.length, `ETag ${JSON.stringify(etag)} does not fit an object header`);
  const header = new Uint8Array(OBJECT_HEADER_BYTES);
  header.set(MAGIC, 0);
  header[MAGIC.length] = etagBytes.length;
  header.set(etagBytes, ETAG_OFFSET);
  return header;
}

/** The ETag in a header; Unavailable if the file is not an object file (a stray file, a foreign tool). */
export function decodeHeader(header: Uint8Array, path: string): string {
  const magicMatches = header.length === OBJECT_HEADER_BYTES && MAGIC.every((byte, i) => header[i] === byte);
  const length = header[MAGIC.length] ?? 0;
  if (!magicMatches || length > ETAG_BYTES_MAX) throw new StoreError('Unavailable', `file store: ${path} is not an object file (bad header)`);
  return new TextDecoder().decode(header.subarray(ETAG_OFFSET, ETAG_OFFSET + length));
}

/** Reads exactly `length` bytes at `position` into a new buffer (pread may return fewer). */
export async function readExactly(handle: FileHandle, position: number, length: number, path: string): Promise<Uint8Array> {
  const bytes = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await handle.read(bytes, done, length - done, position + done);
    if (bytesRead === 0) throw new StoreError('Unavailable', `file store: ${path} ended after ${position + done} bytes, ${length - done} short`);
    done += bytesRead;
  }
  return bytes;
}

export async function writeFully(handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

/** Writes `chunks` back to back from `position`: one writev (a file creation's cost halves), looping if it falls short. */
export async function writeAllAt(handle: FileHandle, chunks: readonly Uint8Array[], position: number): Promise<void> {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  const { bytesWritten } = await handle.writev(chunks as Uint8Array[], position);
  if (bytesWritten === total) return;
  let skipped = 0;
  for (const chunk of chunks) {
    const from = Math.max(0, Math.min(chunk.length, bytesWritten - skipped));
    if (from < chunk.length) await writeFully(handle, chunk.subarray(from), position + skipped + from);
    skipped += chunk.length;
  }
}

export interface OpenObject {
  readonly handle: FileHandle;
  readonly etag: string;
  /** The object's size: the file's, less the header. */
  readonly size: number;
}

/**
 * Opens an object file and reads its header; null if there is none. The open handle pins the
 * inode, so a put that renames a new file over the path meanwhile does not change what is read.
 */
export async function openObject(path: string): Promise<OpenObject | null> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    const { size } = await handle.stat();
    if (size < OBJECT_HEADER_BYTES) throw new StoreError('Unavailable', `file store: ${path} is not an object file (${size} bytes, shorter than a header)`);
    const etag = decodeHeader(await readExactly(handle, 0, OBJECT_HEADER_BYTES, path), path);
    return { handle, etag, size: size - OBJECT_HEADER_BYTES };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The ETag of the object file at `path`, or null if there is none. */
export async function etagAt(path: string): Promise<string | null> {
  const object = await openObject(path);
  if (object === null) return null;
  await object.handle.close();
  return object.etag;
}

/**
 * Creates `path` (which must not exist) holding header and chunks, fsynced if `sync`, so that a
 * rename or link publishes only complete, durable bytes. Removes the file if anything fails.
 * With `direct`, an object of the size it wants is written around the page cache (direct-write.ts).
 */
export async function writeObjectFile(path: string, etag: string, chunks: readonly Uint8Array[], sync: boolean, files: FileSync = systemFileSync, direct: DirectWrites | null = null): Promise<void> {
  const all = [encodeHeader(etag), ...chunks];
  if (direct?.wants(OBJECT_HEADER_BYTES + byteLengthOf(chunks))) {
    try {
      if (await direct.write(path, all, sync, files)) return;
    } catch (error) {
      await removeQuietly(path);
      throw error;
    }
  }
  const handle = await open(path, 'wx');
  try {
    await writeAllAt(handle, all, 0);
    if (sync) await files.sync(handle.fd);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await removeQuietly(path);
    throw error;
  }
  await handle.close();
}

function byteLengthOf(chunks: readonly Uint8Array[]): number {
  let bytes = 0;
  for (const chunk of chunks) bytes += chunk.length;
  return bytes;
}

export async function removeQuietly(path: string): Promise<void> {
  await rm(path, { force: true }).catch(() => undefined);
}
