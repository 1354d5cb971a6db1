import type { StoreStats } from './stats.ts';

/**
 * The one interface through which Ferry reaches object storage (docs/design.md contracts 4, 5 and 9).
 * Every backend (memory, file, s3) passes the same conformance suite, test/store/contract.ts.
 *
 * Semantics every backend gives, as AWS S3 does:
 * - read-after-write and list-after-write consistency;
 * - a put is atomic: readers see the whole old object or the whole new one, never a part, and
 *   nothing appears under a key until its put or multipart completion succeeds;
 * - conditional writes: `ifNoneMatch: '*'` creates only if absent; `ifMatch: etag` replaces only
 *   if the current ETag is that one; a failed condition is StoreError('PreconditionFailed');
 * - list order is unspecified (S3 Express directory buckets return keys unordered).
 */
export interface ObjectStore {
  /** `memory`, `file` or `s3`, for logs and benchmark tables. */
  readonly kind: string;

  /** Stores `body` under `key` atomically, subject to `options`' conditions (PreconditionFailed when one fails). */
  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult>;
  /** The whole object, or `range` of it. NotFound if absent. */
  get(key: string, options?: GetOptions): Promise<GetResult>;
  /** Size and ETag, or null if absent. */
  head(key: string): Promise<ObjectInfo | null>;
  /** One page of keys under `prefix`, in no particular order. */
  list(prefix: string, options?: ListOptions): Promise<ListPage>;
  /** Removes `key`; succeeds when it is already absent. */
  delete(key: string): Promise<void>;
  /** Removes many keys in as few requests as the backend allows; absent keys count as deleted. */
  deleteMany(keys: readonly string[]): Promise<DeleteManyResult>;
  /** Starts a multipart upload; nothing is visible under `key` until `complete`. */
  createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload>;
  /**
   * Optional: starts an object written front to back, for a backend where that costs less than
   * parts (the file store appends to one file; its parts are copied again at completion).
   * StreamingUpload uses it when present. Nothing is visible under `key` until `finish`.
   */
  openSequentialWrite?(key: string, options?: MultipartOptions): Promise<SequentialWrite>;
  /** Requests by class and bytes moved since the store was opened. */
  stats(): StoreStats;
  /** Releases connections and locks; the store is not used after. */
  close(): Promise<void>;
}

/** The conditions of a put, and what can abort it. */
export interface PutOptions {
  /** `'*'`: create only if no object exists under the key. */
  readonly ifNoneMatch?: '*';
  /** Replace only if the current object's ETag is this one (compare-and-swap). */
  readonly ifMatch?: string;
  /**
   * [CW1] Who wrote this conditional put: when its answer is ambiguous (a timeout, a 5xx) and the
   * backend reads the key back, this decides whether the object there is this write's, never
   * equal bytes (docs/cluster-protocol.md, "Conditional writes and ambiguous answers"). Absent:
   * [CW2] the body's bytes name their writer, and equal bytes are this write's.
   */
  readonly authorship?: Authorship;
  /** Aborts the request (StoreError); whether the object was written is then unknown. */
  readonly signal?: AbortSignal;
}

/** [CW1] The proof of a conditional put's authorship that a read-back asks. */
export interface Authorship {
  /** Whether `body`, the whole object now under the key, is the one this write put (its nonce). */
  wrote(body: Uint8Array): boolean;
}

/** What a successful put or multipart completion returns. */
export interface PutResult {
  /** The new object's ETag: what a later `ifMatch` names. */
  readonly etag: string;
}

/** Bytes [start, end): `end` exclusive and clamped to the object's size; absent means to the end. */
export interface ByteRange {
  /** The first byte, from 0. */
  readonly start: number;
  /** One past the last byte. */
  readonly end?: number;
}

/** What part of an object a get reads. */
export interface GetOptions {
  /** Only these bytes; the whole object when absent. */
  readonly range?: ByteRange;
  /** Aborts the request (StoreError). */
  readonly signal?: AbortSignal;
}

/** An object's bytes (or the range asked for) and its version. */
export interface GetResult {
  /** The bytes read: the range asked for, or the whole object. */
  readonly body: Uint8Array;
  /** The version read. */
  readonly etag: string;
  /** The whole object's size, whatever range was asked for. */
  readonly size: number;
}

/** One object as a head or a list sees it. */
export interface ObjectInfo {
  /** Its full key. */
  readonly key: string;
  /** Its size in bytes. */
  readonly size: number;
  /** Its current version. */
  readonly etag: string;
}

/** Which page of a list to read. */
export interface ListOptions {
  /** From a previous page's `nextToken`. */
  readonly token?: string;
  /** At most this many keys in the page (backends may return fewer); default 1000. */
  readonly maxKeys?: number;
}

/** One page of a list. */
export interface ListPage {
  /** The objects of this page, in no particular order. */
  readonly objects: ObjectInfo[];
  /** Absent on the last page. */
  readonly nextToken?: string;
}

/** What a deleteMany removed and what it could not. */
export interface DeleteManyResult {
  /** The keys now absent (including those that were already). */
  readonly deleted: string[];
  /** The keys that may still exist, each with why (`key`, `error`). */
  readonly failed: {
    /** A key not deleted. */
    readonly key: string;
    /** Why. */
    readonly error: Error;
  }[];
}

/** The condition of a multipart upload's completion. */
export interface MultipartOptions {
  /** `'*'`: completion succeeds only if no object exists under the key by then. */
  readonly ifNoneMatch?: '*';
}

/** An object being written front to back (ObjectStore.openSequentialWrite). */
export interface SequentialWrite {
  /** Where the object appears on `finish`. */
  readonly key: string;
  /** Adds `chunks`, in order, at the end: one write. One call at a time; the caller keeps the chunks unchanged until it resolves. */
  append(chunks: readonly Uint8Array[]): Promise<void>;
  /** Makes the object visible, atomically, subject to the condition given at the start (PreconditionFailed when it fails). */
  finish(): Promise<PutResult>;
  /** Discards what was written; nothing becomes visible. Succeeds when already finished, failed or aborted. */
  abort(): Promise<void>;
}

/** A multipart upload under way: parts upload in any order, then one completion makes the object. */
export interface MultipartUpload {
  /** Where the object appears on completion. */
  readonly key: string;
  /** The backend's id of this upload. */
  readonly uploadId: string;
  /** Parts are numbered from 1; every part but the last must be at least MULTIPART_PART_BYTES_MIN. */
  uploadPart(partNumber: number, body: Uint8Array): Promise<UploadedPart>;
  /** Makes the object visible, atomically, from the listed parts in order. */
  complete(parts: readonly UploadedPart[]): Promise<PutResult>;
  /** Discards the parts; nothing was ever visible. */
  abort(): Promise<void>;
}

/** A part as uploaded: what `complete` lists. */
export interface UploadedPart {
  /** Its number, from 1. */
  readonly partNumber: number;
  /** The part's ETag, which completion checks. */
  readonly etag: string;
  /** Its size in bytes. */
  readonly size: number;
}

/** S3's rules, enforced by every backend so tests catch what AWS would refuse. */
export const MULTIPART_PART_BYTES_MIN = 5 * 1024 * 1024;
/** The largest part S3 takes (5 GiB). */
export const MULTIPART_PART_BYTES_MAX = 5 * 1024 * 1024 * 1024;
/** The most parts one upload may have. */
export const MULTIPART_PARTS_MAX = 10_000;
/** S3 keys are at most 1024 bytes of UTF-8. */
export const KEY_BYTES_MAX = 1024;
/** S3's page size for ListObjectsV2 and its batch limit for DeleteObjects. */
export const LIST_PAGE_KEYS_MAX = 1000;
/** The most keys one deleteMany request to S3 removes. */
export const DELETE_BATCH_KEYS_MAX = 1000;
