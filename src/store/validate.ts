import { StoreError } from './errors.ts';
import { KEY_BYTES_MAX, LIST_PAGE_KEYS_MAX, MULTIPART_PART_BYTES_MAX, MULTIPART_PARTS_MAX, type ByteRange, type ListOptions, type PutOptions, type UploadedPart } from './object-store.ts';

/**
 * Checks of the caller's input that every backend makes the same way and before any request is
 * sent, so bad input fails identically (and is never billed) whichever store is behind.
 */

/** Enough of a key to recognise it in a message without pasting a kilobyte. */
const KEY_SHOWN_CHARS_MAX = 80;

export function showKey(key: string): string {
  return JSON.stringify(key.length > KEY_SHOWN_CHARS_MAX ? `${key.slice(0, KEY_SHOWN_CHARS_MAX)}…` : key);
}

export function invalidArgument(key: string | undefined, message: string): StoreError {
  return new StoreError('InvalidArgument', message, key === undefined ? {} : { key });
}

/** S3's key rules: 1 to 1024 bytes of well-formed UTF-8. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw invalidArgument(key, 'an object key must be a non-empty string');
  if (!key.isWellFormed()) throw invalidArgument(key, `key ${showKey(key)} holds a lone UTF-16 surrogate, which has no UTF-8 form`);
  const bytes = Buffer.byteLength(key, 'utf8');
  if (bytes > KEY_BYTES_MAX) throw invalidArgument(key, `key ${showKey(key)} is ${bytes} bytes of UTF-8, longer than S3's limit of ${KEY_BYTES_MAX}`);
}

export function checkKeys(keys: readonly string[]): void {
  for (const key of keys) checkKey(key);
}

export function checkPutOptions(key: string, options: PutOptions | undefined): void {
  if (options === undefined) return;
  if (options.ifNoneMatch !== undefined && options.ifNoneMatch !== '*') throw invalidArgument(key, `ifNoneMatch must be '*', not ${JSON.stringify(options.ifNoneMatch)}`);
  if (options.ifNoneMatch !== undefined && options.ifMatch !== undefined) throw invalidArgument(key, `put of ${showKey(key)}: ifNoneMatch and ifMatch cannot be combined`);
  if (options.ifMatch !== undefined && (typeof options.ifMatch !== 'string' || options.ifMatch.length === 0)) throw invalidArgument(key, `put of ${showKey(key)}: ifMatch must be a non-empty ETag`);
}

/** The shape of a range, before the object's size is known: integers, start ≥ 0, end > start. */
export function checkRangeShape(key: string, range: ByteRange): void {
  if (!Number.isSafeInteger(range.start) || range.start < 0) throw invalidArgument(key, `range of ${showKey(key)}: start ${range.start} is not a non-negative integer`);
  if (range.end === undefined) return;
  if (!Number.isSafeInteger(range.end) || range.end <= range.start) throw invalidArgument(key, `range of ${showKey(key)}: end ${range.end} must be an integer greater than start ${range.start}`);
}

/** `range` resolved against an object of `size` bytes: [start, end) with end clamped, start < size. */
export function resolveRange(key: string, range: ByteRange | undefined, size: number): { start: number; end: number } {
  if (range === undefined) return { start: 0, end: size };
  checkRangeShape(key, range);
  if (range.start >= size) throw invalidArgument(key, `range of ${showKey(key)}: start ${range.start} is not below the object's size ${size}`);
  return { start: range.start, end: Math.min(range.end ?? size, size) };
}

/** The page size asked for, clamped to S3's 1000. */
export function checkListOptions(options: ListOptions | undefined): number {
  const maxKeys = options?.maxKeys ?? LIST_PAGE_KEYS_MAX;
  if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw invalidArgument(undefined, `list: maxKeys must be a positive integer, not ${maxKeys}`);
  return Math.min(maxKeys, LIST_PAGE_KEYS_MAX);
}

export function checkPartNumber(key: string, partNumber: number): void {
  if (!Number.isSafeInteger(partNumber) || partNumber < 1 || partNumber > MULTIPART_PARTS_MAX) {
    throw invalidArgument(key, `multipart upload of ${showKey(key)}: part number ${partNumber} is outside 1..${MULTIPART_PARTS_MAX}`);
  }
}

export function checkPartBody(key: string, partNumber: number, body: Uint8Array): void {
  if (body.length > MULTIPART_PART_BYTES_MAX) {
    throw invalidArgument(key, `multipart upload of ${showKey(key)}: part ${partNumber} is ${body.length} bytes, more than S3's limit of ${MULTIPART_PART_BYTES_MAX}`);
  }
}

/** The part list of a completion: non-empty, part numbers valid and strictly ascending. */
export function checkPartList(key: string, parts: readonly UploadedPart[]): void {
  if (parts.length === 0) throw invalidArgument(key, `multipart upload of ${showKey(key)}: complete needs at least one part`);
  let previous = 0;
  for (const part of parts) {
    checkPartNumber(key, part.partNumber);
    if (part.partNumber <= previous) throw invalidArgument(key, `multipart upload of ${showKey(key)}: parts must be listed in strictly ascending order (${part.partNumber} after ${previous})`);
    previous = part.partNumber;
  }
}

/** S3's EntityTooSmall: every part but the last must be at least `partBytesMin`. */
export function checkPartSizes(key: string, sizes: readonly { partNumber: number; size: number }[], partBytesMin: number): void {
  for (const part of sizes.slice(0, -1)) {
    if (part.size < partBytesMin) {
      throw invalidArgument(key, `multipart upload of ${showKey(key)}: part ${part.partNumber} is ${part.size} bytes; every part but the last must be at least ${partBytesMin}`);
    }
  }
}
