import type { ByteRange } from './object-store.ts';

/**
 * Byte ranges in S3's terms. ObjectStore ranges are [start, end) with `end` exclusive and clamped
 * to the object; HTTP's are inclusive: `bytes=start-(end-1)`, or `bytes=start-` to the end.
 * The range's shape is checked before (validate.ts); a start past the object is S3's 416.
 */

/** The Range header for a non-empty range, or undefined for the whole object. */
export function rangeHeader(range: ByteRange | undefined): string | undefined {
  if (range === undefined) return undefined;
  return range.end === undefined ? `bytes=${range.start}-` : `bytes=${range.start}-${range.end - 1}`;
}

/** The whole object's size from `Content-Range: bytes a-b/size`, or undefined when absent or `*`. */
export function sizeFromContentRange(contentRange: string | null | undefined): number | undefined {
  if (contentRange === undefined || contentRange === null) return undefined;
  const match = /\/(\d+)$/.exec(contentRange);
  return match === null ? undefined : Number(match[1]);
}

/**
 * The body for `range` when the server answered 200 with the whole object instead of 206 (HTTP
 * allows a server to ignore Range; s3rver does for `bytes=0-0`): the requested slice of it.
 */
export function fitToRange(body: Uint8Array, range: ByteRange | undefined, contentRange: string | null | undefined): Uint8Array {
  if (range === undefined || (contentRange !== undefined && contentRange !== null)) return body;
  return body.subarray(range.start, Math.min(range.end ?? body.byteLength, body.byteLength));
}
