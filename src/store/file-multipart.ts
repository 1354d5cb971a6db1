import { open, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { type FileSync, systemFileSync } from '../util/file-sync.ts';
import { StoreError } from './errors.ts';
import { multipartEtag } from './etag.ts';
import { OBJECT_HEADER_BYTES, openObject, writeFully, type OpenObject } from './file-object.ts';
import { errnoOf } from './fs-errors.ts';
import type { UploadedPart } from './object-store.ts';
import { checkPartSizes, invalidArgument, showKey } from './validate.ts';

/**
 * The file store's multipart uploads: each upload is a directory `multipart/<uploadId>/` whose
 * parts are object files `<partNumber>.part` (header with the part's ETag, then its bytes), each
 * published by a rename so a part is whole or absent. Completion checks the listed parts and
 * concatenates them into one temporary object file, which the store then publishes like a put.
 * Parts are not fsynced: the assembled file is, and an upload dies with its process anyway.
 */

/** Bytes moved per read/write while concatenating parts: 1 MiB keeps syscalls few and memory flat. */
export const COPY_CHUNK_BYTES = 1024 * 1024;

export function partPath(uploadDirectory: string, partNumber: number): string {
  return join(uploadDirectory, `${partNumber}.part`);
}

export function uploadGone(key: string, uploadDirectory: string): StoreError {
  return new StoreError('NotFound', `multipart upload of ${showKey(key)} no longer exists (completed or aborted): ${uploadDirectory}`, { key });
}

/** Opens a listed part and checks it is the one the caller uploaded. */
async function openPart(uploadDirectory: string, key: string, part: UploadedPart): Promise<OpenObject> {
  const object = await openObject(partPath(uploadDirectory, part.partNumber));
  if (object === null) throw invalidArgument(key, `multipart upload of ${showKey(key)}: part ${part.partNumber} was not uploaded`);
  if (object.etag !== part.etag) {
    await object.handle.close();
    throw invalidArgument(key, `multipart upload of ${showKey(key)}: part ${part.partNumber} has ETag ${object.etag}, not ${part.etag}`);
  }
  return object;
}

/** Checks every listed part (present, same ETag, big enough) before any byte is copied. */
async function checkParts(uploadDirectory: string, key: string, parts: readonly UploadedPart[], partBytesMin: number): Promise<void> {
  try {
    await stat(uploadDirectory);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') throw uploadGone(key, uploadDirectory);
    throw error;
  }
  const sizes: { partNumber: number; size: number }[] = [];
  for (const part of parts) {
    const object = await openPart(uploadDirectory, key, part);
    await object.handle.close();
    sizes.push({ partNumber: part.partNumber, size: object.size });
  }
  checkPartSizes(key, sizes, partBytesMin);
}

async function copyBody(from: OpenObject, to: FileHandle, position: number, buffer: Uint8Array): Promise<number> {
  let copied = 0;
  while (copied < from.size) {
    const length = Math.min(buffer.length, from.size - copied);
    const { bytesRead } = await from.handle.read(buffer, 0, length, OBJECT_HEADER_BYTES + copied);
    if (bytesRead === 0) throw new StoreError('Unavailable', `file store: a multipart part ended ${from.size - copied} bytes early`);
    await writeFully(to, buffer.subarray(0, bytesRead), position + copied);
    copied += bytesRead;
  }
  return copied;
}

/**
 * Writes the object the listed parts make into `temporaryPath` (created here, fsynced if `sync`)
 * and returns its ETag. The caller publishes the file and removes the upload.
 */
export async function assembleUpload(
  uploadDirectory: string,
  key: string,
  parts: readonly UploadedPart[],
  partBytesMin: number,
  temporaryPath: string,
  sync: boolean,
  header: (etag: string) => Uint8Array,
  files: FileSync = systemFileSync,
): Promise<string> {
  await checkParts(uploadDirectory, key, parts, partBytesMin);
  const etag = multipartEtag(parts.map((part) => part.etag));
  const target = await open(temporaryPath, 'wx');
  try {
    await writeFully(target, header(etag), 0);
    const buffer = new Uint8Array(COPY_CHUNK_BYTES);
    let position = OBJECT_HEADER_BYTES;
    for (const part of parts) {
      const object = await openPart(uploadDirectory, key, part);
      try {
        position += await copyBody(object, target, position, buffer);
      } finally {
        await object.handle.close();
      }
    }
    if (sync) await files.sync(target.fd);
  } finally {
    await target.close();
  }
  return etag;
}
