import { randomUUID } from 'node:crypto';
import { link, mkdir, readdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { type FileSync, systemFileSync } from '../util/file-sync.ts';
import { StoreError } from './errors.ts';
import { type CurrentObject, putConditionally } from './conditional-write.ts';
import { contentEtag } from './etag.ts';
import { checkFileKey, objectPathOf } from './file-keys.ts';
import { KeyLocks, LOCK_TIMEOUT_MS_DEFAULT } from './file-locks.ts';
import { walkKeys } from './file-walk.ts';
import { assembleUpload, partPath, uploadGone } from './file-multipart.ts';
import { FileSequentialWrite, type FileSequentialWriteHost } from './file-sequential-write.ts';
import { encodeHeader, etagAt, openObject, readExactly, OBJECT_HEADER_BYTES, removeQuietly, writeObjectFile } from './file-object.ts';
import { errnoOf, storeErrorFromFs } from './fs-errors.ts';
import { DirectWrites } from './direct-write.ts';
import { decodeListToken, pageOf } from './list-token.ts';
import {
  DELETE_BATCH_KEYS_MAX,
  MULTIPART_PART_BYTES_MIN,
  type DeleteManyResult,
  type GetOptions,
  type GetResult,
  type ListOptions,
  type ListPage,
  type MultipartOptions,
  type MultipartUpload,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  type SequentialWrite,
  type UploadedPart,
} from './object-store.ts';
import { StatsRecorder, type RequestClass, type StoreStats } from './stats.ts';
import { checkKey, checkListOptions, checkPartBody, checkPartList, checkPartNumber, checkPutOptions, checkRangeShape, invalidArgument, resolveRange, showKey } from './validate.ts';
import { mapLimited } from '../util/map-limited.ts';

/** How a FileStore writes: multipart rules, fsync, lock waits. */
export interface FileStoreOptions {
  /** The smallest non-last multipart part; default S3's 5 MiB. */
  readonly multipartPartBytesMin?: number;
  /** fsync files and directories before a write resolves (default true). Off only for tests that never crash. */
  readonly fsync?: boolean;
  /** How long a write waits for its key's lock held by another process. */
  readonly lockTimeoutMs?: number;
  /** Where fsyncs go; node:fs unless a test records them to simulate a power loss. */
  readonly files?: FileSync;
  /** Write larger puts around the page cache (O_DIRECT, direct-write.ts) where the filesystem allows (default true). */
  readonly directWrites?: boolean;
}

/** The root's four namespaces; objects live only under OBJECTS_DIR, so nothing else is ever listed. */
export const OBJECTS_DIR = 'objects';
export const TEMP_DIR = 'tmp';
export const MULTIPART_DIR = 'multipart';
export const LOCKS_DIR = 'locks';
/** Temporary files older than this at open belong to a crashed writer (a live put takes milliseconds). */
export const STALE_TEMP_AGE_MS = 60 * 60 * 1000;
/** Multipart uploads untouched this long are abandoned, as an S3 lifecycle rule would judge them. */
export const STALE_UPLOAD_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * A directory fsync after a write landed is tried this often before the write's outcome is called
 * unknown (LandedNotSynced): what fails it (EMFILE at the descriptor limit) is often gone a few
 * milliseconds later, and an unknown outcome costs its writer a read-back or more.
 */
export const LANDED_SYNC_ATTEMPTS_MAX = 4;
/** The first wait between those tries, doubling: 5, 10, 20 ms, 35 ms in all. */
const LANDED_SYNC_BACKOFF_MS = 5;
/** A put retries its rename this often when a concurrent delete removes the emptied parent directory. */
const PUBLISH_ATTEMPTS_MAX = 8;
/** Object headers a list page reads at once: each costs an open file while in flight. */
const LIST_HEADER_CONCURRENCY = 16;

/**
 * The embedded default object store (`file:///path`): S3's semantics on a local directory, safe
 * when several processes share it.
 *
 * - A put writes a temporary file in the root's own `tmp/` (same filesystem), fsyncs it, and
 *   publishes it by rename (unconditional, If-Match) or link (If-None-Match: link fails with
 *   EEXIST if the key exists, atomically), then fsyncs the directory. Readers see the whole old
 *   or the whole new object; a crash leaves at most a stray temporary file, never listed.
 * - Writes to one key take its flock(2) stripe (file-locks.ts), so compare-and-swap is atomic
 *   across processes: read the current ETag, compare, rename, all under the lock.
 * - Keys map to paths as file-keys.ts describes; objects are files with a small header holding
 *   the ETag (file-object.ts).
 */
export class FileStore implements ObjectStore {
  readonly kind = 'file';
  /** The directory the objects live under. */
  readonly root: string;
  readonly #objects: string;
  readonly #temp: string;
  readonly #multipart: string;
  readonly #locks: KeyLocks;
  readonly #stats = new StatsRecorder();
  readonly #sync: boolean;
  readonly #files: FileSync;
  readonly #direct: DirectWrites | null;
  readonly #partBytesMin: number;
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  private constructor(root: string, options: FileStoreOptions) {
    this.root = root;
    this.#objects = join(root, OBJECTS_DIR);
    this.#temp = join(root, TEMP_DIR);
    this.#multipart = join(root, MULTIPART_DIR);
    this.#locks = new KeyLocks(join(root, LOCKS_DIR), options.lockTimeoutMs ?? LOCK_TIMEOUT_MS_DEFAULT);
    this.#sync = options.fsync ?? true;
    this.#files = options.files ?? systemFileSync;
    this.#direct = options.directWrites === false ? null : new DirectWrites();
    this.#partBytesMin = options.multipartPartBytesMin ?? MULTIPART_PART_BYTES_MIN;
  }

  /** Opens (creating if needed) a store rooted at `root`, and sweeps what crashed writers left. */
  static async open(root: string, options: FileStoreOptions = {}): Promise<FileStore> {
    const absolute = resolve(root);
    if (options.multipartPartBytesMin !== undefined && !(options.multipartPartBytesMin >= 1))
      throw invalidArgument(undefined, `multipartPartBytesMin must be at least 1, not ${options.multipartPartBytesMin}`);
    let store: FileStore;
    try {
      store = new FileStore(absolute, options);
      // Durably: an objects directory lost to a power loss would take every object with it.
      for (const directory of [OBJECTS_DIR, TEMP_DIR, MULTIPART_DIR]) await store.#makeDirectories(join(absolute, directory));
    } catch (error) {
      throw storeErrorFromFs(error, `open the store directory ${absolute}:`);
    }
    await store.#sweepStale(Date.now());
    return store;
  }

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    this.#checkKey(key);
    checkPutOptions(key, options);
    if (options?.signal?.aborted) throw aborted(key, options.signal);
    return this.#run('put', body.length, `put`, key, () => {
      if (options?.ifNoneMatch === undefined && options?.ifMatch === undefined) return this.#putOnce(key, body, options ?? {});
      // [CW1] A conditional put whose directory fsync failed after it landed is resolved as S3's ambiguous answers are.
      const write = { key, objectKey: this.#objectPath(key), body, ifNoneMatch: options.ifNoneMatch, ifMatch: options.ifMatch, authorship: options.authorship, signal: options.signal };
      return putConditionally(write, {
        attempt: () => this.#putOnce(key, body, options).catch((error: unknown) => Promise.reject(storeErrorFromFs(error, 'put', key))),
        readBack: () => this.#readBackDurably(key),
        mayHaveTakenEffect: (error) => error instanceof LandedNotSynced,
        attemptsMax: 1, // callers retry a file store's failures; only the read-back is this put's own
        backoff: async () => {},
      });
    });
  }

  async #putOnce(key: string, body: Uint8Array, options: PutOptions): Promise<PutResult> {
    const etag = contentEtag(body);
    const temporary = this.#temporaryPath();
    await writeObjectFile(temporary, etag, [body], this.#sync, this.#files, this.#direct);
    let renamed = false;
    try {
      renamed = await this.#publish(key, temporary, options);
    } finally {
      if (!renamed) await removeQuietly(temporary);
    }
    return { etag };
  }

  /**
   * The whole object under `key` once its directory entry is durable (null: none): a read-back
   * that finds a put's object takes it for landed, so the fsync that put could not finish is done
   * first.
   */
  async #readBackDurably(key: string): Promise<CurrentObject | null> {
    const path = this.#objectPath(key);
    try {
      await this.#syncLanded(dirname(path));
      const object = await openObject(path);
      if (object === null) return null;
      try {
        return { body: await readExactly(object.handle, OBJECT_HEADER_BYTES, object.size, path), etag: object.etag };
      } finally {
        await object.handle.close();
      }
    } catch (error) {
      throw storeErrorFromFs(error, 'read back', key);
    }
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.#checkKey(key);
    if (options?.range !== undefined) checkRangeShape(key, options.range);
    if (options?.signal?.aborted) throw aborted(key, options.signal);
    return this.#run('get', 0, 'get', key, async () => {
      const object = await openObject(this.#objectPath(key));
      if (object === null) throw notFound(key);
      try {
        const { start, end } = resolveRange(key, options?.range, object.size);
        // The one copy of a read, from the page cache into a buffer the caller owns.
        const body = await readExactly(object.handle, OBJECT_HEADER_BYTES + start, end - start, this.#objectPath(key));
        this.#stats.received(body.length);
        return { body, etag: object.etag, size: object.size };
      } finally {
        await object.handle.close();
      }
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    this.#checkKey(key);
    return this.#run('head', 0, 'head', key, () => this.#info(key));
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const maxKeys = checkListOptions(options);
    const afterKey = options?.token === undefined ? undefined : decodeListToken(prefix, options.token);
    return this.#run('list', 0, 'list', prefix, async () => {
      const keys = (await walkKeys(this.#objects, prefix, afterKey)).sort();
      const page = pageOf(prefix, keys, afterKey, maxKeys);
      const infos = await mapLimited(page.keys, LIST_HEADER_CONCURRENCY, (key) => this.#info(key));
      // A key deleted between the walk and its header read is simply not listed.
      const objects = infos.filter((info): info is ObjectInfo => info !== null);
      return page.nextToken === undefined ? { objects } : { objects, nextToken: page.nextToken };
    });
  }

  async delete(key: string): Promise<void> {
    this.#checkKey(key);
    await this.#run('delete', 0, 'delete', key, () => this.#deleteKey(key));
  }

  /** One 'delete' request per 1000 keys, as S3's DeleteObjects; a key that fails is listed under `failed`. */
  async deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    this.#checkOpen();
    keys.forEach((key) => this.#checkKey(key));
    const result: DeleteManyResult = { deleted: [], failed: [] };
    for (let i = 0; i < keys.length; i += DELETE_BATCH_KEYS_MAX) {
      const batch = keys.slice(i, i + DELETE_BATCH_KEYS_MAX);
      await this.#run('delete', 0, 'delete', batch[0], () =>
        mapLimited(batch, LIST_HEADER_CONCURRENCY, async (key) => {
          try {
            await this.#deleteKey(key);
            result.deleted.push(key);
          } catch (error) {
            result.failed.push({ key, error: storeErrorFromFs(error, 'delete', key) });
          }
        }),
      );
    }
    return result;
  }

  async createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload> {
    this.#checkKey(key);
    if (options?.ifNoneMatch !== undefined && options.ifNoneMatch !== '*') throw invalidArgument(key, `ifNoneMatch must be '*', not ${JSON.stringify(options.ifNoneMatch)}`);
    return this.#run('multipartCreate', 0, 'create a multipart upload of', key, async () => {
      const uploadId = randomUUID();
      await mkdir(join(this.#multipart, uploadId));
      return this.#uploadHandle(key, uploadId, options?.ifNoneMatch === '*');
    });
  }

  /** An object written front to back into one file (file-sequential-write.ts), published like a put. */
  async openSequentialWrite(key: string, options?: MultipartOptions): Promise<SequentialWrite> {
    this.#checkKey(key);
    if (options?.ifNoneMatch !== undefined && options.ifNoneMatch !== '*') throw invalidArgument(key, `ifNoneMatch must be '*', not ${JSON.stringify(options.ifNoneMatch)}`);
    const condition: PutOptions = options?.ifNoneMatch === '*' ? { ifNoneMatch: '*' } : {};
    const host: FileSequentialWriteHost = {
      run: async (requestClass, bytesIn, what, action) => this.#run(requestClass, bytesIn, what, key, action),
      publish: (temporary) => this.#publish(key, temporary, condition),
      sync: this.#sync,
      files: this.#files,
      direct: this.#direct,
    };
    return this.#run('multipartCreate', 0, 'start a sequential write of', key, () => FileSequentialWrite.create(key, host, this.#temporaryPath()));
  }

  stats(): StoreStats {
    return this.#stats.snapshot();
  }

  /** Waits for requests in flight, then releases the lock files. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    this.#locks.close();
  }

  #uploadHandle(key: string, uploadId: string, ifNoneMatch: boolean): MultipartUpload {
    const directory = join(this.#multipart, uploadId);
    return {
      key,
      uploadId,
      uploadPart: async (partNumber, body) => this.#uploadPart(key, directory, partNumber, body),
      complete: async (parts) => this.#complete(key, directory, parts, ifNoneMatch),
      // Idempotent: aborting an upload that is already gone succeeds.
      abort: async () => this.#run('multipartAbort', 0, 'abort the multipart upload of', key, () => rm(directory, { recursive: true, force: true })),
    };
  }

  #uploadPart(key: string, directory: string, partNumber: number, body: Uint8Array): Promise<UploadedPart> {
    this.#checkOpen();
    checkPartNumber(key, partNumber);
    checkPartBody(key, partNumber, body);
    return this.#run('uploadPart', body.length, `upload part ${partNumber} of`, key, async () => {
      const etag = contentEtag(body);
      const temporary = this.#temporaryPath();
      await writeObjectFile(temporary, etag, [body], false);
      try {
        await rename(temporary, partPath(directory, partNumber));
      } catch (error) {
        await removeQuietly(temporary);
        throw errnoOf(error) === 'ENOENT' ? uploadGone(key, directory) : error;
      }
      return { partNumber, etag, size: body.length };
    });
  }

  #complete(key: string, directory: string, parts: readonly UploadedPart[], ifNoneMatch: boolean): Promise<PutResult> {
    this.#checkOpen();
    checkPartList(key, parts);
    return this.#run('multipartComplete', 0, 'complete the multipart upload of', key, async () => {
      const temporary = this.#temporaryPath();
      let renamed = false;
      try {
        const etag = await assembleUpload(directory, key, parts, this.#partBytesMin, temporary, this.#sync, encodeHeader, this.#files);
        renamed = await this.#publish(key, temporary, ifNoneMatch ? { ifNoneMatch: '*' } : {});
        await rm(directory, { recursive: true, force: true });
        return { etag };
      } finally {
        if (!renamed) await removeQuietly(temporary);
      }
    });
  }

  /**
   * Makes the complete, fsynced file `temporary` the object under `key`, honouring the
   * condition, under the key's lock. The rename or link is the single atomic step. True if it
   * was a rename (the temporary file is gone), false if a link (the caller removes it).
   */
  async #publish(key: string, temporary: string, condition: PutOptions): Promise<boolean> {
    const path = this.#objectPath(key);
    return this.#locks.withLock(key, async () => {
      if (condition.ifMatch !== undefined) {
        const current = await etagAt(path);
        if (current !== condition.ifMatch) {
          throw preconditionFailed(key, current === null ? 'no object exists under it (ifMatch)' : `its ETag is ${current}, not ${condition.ifMatch} (ifMatch)`);
        }
      }
      const exclusive = condition.ifNoneMatch === '*';
      try {
        await this.#inParentDirectory(path, () => (exclusive ? link(temporary, path) : rename(temporary, path)));
      } catch (error) {
        if (exclusive && errnoOf(error) === 'EEXIST') {
          // A writer told of a failed condition may read the object and take it for its own earlier
          // write (CW2): that object's entry is made durable before anyone is told it exists.
          await this.#syncLanded(dirname(path));
          throw preconditionFailed(key, 'an object already exists under it (ifNoneMatch: *)');
        }
        throw error;
      }
      try {
        await this.#syncLanded(dirname(path));
      } catch (error) {
        throw new LandedNotSynced(key, error);
      }
      return !exclusive;
    });
  }

  /**
   * Runs `step` (a rename or link into `path`'s directory), creating the directory when it is
   * missing. A concurrent delete may remove the directory once it is empty, between our mkdir and
   * our rename; then we simply make it again, a bounded number of times.
   */
  async #inParentDirectory(path: string, step: () => Promise<void>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await step();
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT' || attempt === PUBLISH_ATTEMPTS_MAX) throw error;
      }
      await this.#makeDirectories(dirname(path));
    }
  }

  /** mkdir -p, fsyncing the parent of every directory it created so the new entries survive a crash. */
  async #makeDirectories(directory: string): Promise<void> {
    const first = await mkdir(directory, { recursive: true });
    if (first === undefined || !this.#sync) return;
    for (let created = directory; created.length >= first.length; created = dirname(created)) await this.#syncDirectory(dirname(created));
  }

  async #deleteKey(key: string): Promise<void> {
    const path = this.#objectPath(key);
    await this.#locks.withLock(key, async () => {
      try {
        await unlink(path);
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') return;
        throw error;
      }
      await this.#syncDirectory(dirname(path));
      await this.#pruneEmptyDirectories(dirname(path));
    });
  }

  /** Removes directories a delete left empty, up to the objects root, so dead prefixes do not pile up. */
  async #pruneEmptyDirectories(directory: string): Promise<void> {
    for (let current = directory; current.length > this.#objects.length; current = dirname(current)) {
      try {
        await rmdir(current);
      } catch {
        return; // not empty (ENOTEMPTY), or already gone
      }
    }
  }

  async #info(key: string): Promise<ObjectInfo | null> {
    const object = await openObject(this.#objectPath(key));
    if (object === null) return null;
    await object.handle.close();
    return { key, size: object.size, etag: object.etag };
  }

  /**
   * One request: counted, tracked so `close` can wait for it, and its filesystem errors mapped
   * to StoreErrors that name the operation, the key and the path.
   */
  #run<T>(requestClass: RequestClass, bytesIn: number, what: string, key: string | undefined, action: () => Promise<T>): Promise<T> {
    this.#checkOpen();
    this.#stats.request(requestClass, bytesIn);
    const promise = action().catch((error: unknown) => {
      const mapped = storeErrorFromFs(error, what, key);
      this.#stats.error(mapped.kind);
      throw mapped;
    });
    this.#inFlight.add(promise);
    const forget = (): void => void this.#inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  /** The directory fsync that makes a landed entry durable, tried LANDED_SYNC_ATTEMPTS_MAX times. */
  async #syncLanded(directory: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#syncDirectory(directory);
      } catch (error) {
        if (attempt >= LANDED_SYNC_ATTEMPTS_MAX) throw error;
      }
      await Bun.sleep(LANDED_SYNC_BACKOFF_MS * 2 ** (attempt - 1));
    }
  }

  async #syncDirectory(directory: string): Promise<void> {
    if (!this.#sync) return;
    try {
      await this.#files.syncDirectory(directory);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT') return; // a concurrent delete pruned it: no entry left to make durable
      throw error;
    }
  }

  /** Removes temporary files and multipart uploads that crashed writers left long ago. */
  async #sweepStale(nowMs: number): Promise<void> {
    const sweep = async (directory: string, ageMs: number): Promise<void> => {
      for (const name of await readdir(directory).catch(() => [] as string[])) {
        const path = join(directory, name);
        const modified = await stat(path).then(
          (s) => s.mtimeMs,
          () => nowMs,
        );
        if (nowMs - modified > ageMs) await rm(path, { recursive: true, force: true }).catch(() => undefined);
      }
    };
    await sweep(this.#temp, STALE_TEMP_AGE_MS);
    await sweep(this.#multipart, STALE_UPLOAD_AGE_MS);
  }

  #checkKey(key: string): void {
    this.#checkOpen();
    checkKey(key);
    checkFileKey(key);
  }

  #objectPath(key: string): string {
    return join(this.#objects, objectPathOf(key));
  }

  #temporaryPath(): string {
    return join(this.#temp, `${process.pid}-${randomUUID()}`);
  }

  #checkOpen(): void {
    if (this.#closed) throw new StoreError('Closed', `the file store at ${this.root} is closed`);
  }
}

/**
 * A write whose rename or link landed (the object is visible) and whose directory fsync then
 * failed (EMFILE at the descriptor limit, EIO): whether it survives a power loss is unknown, so it
 * fails retriable, and a conditional put reads its key back before it answers (putConditionally).
 */
class LandedNotSynced extends StoreError {
  constructor(key: string, cause: unknown) {
    super('Unavailable', `file store: the write of ${showKey(key)} landed but its directory could not be fsynced (${cause instanceof Error ? cause.message : String(cause)}): its outcome is unknown`, {
      key,
      cause,
    });
  }
}

function notFound(key: string): StoreError {
  return new StoreError('NotFound', `no object under key ${showKey(key)}`, { key });
}

function preconditionFailed(key: string, why: string): StoreError {
  return new StoreError('PreconditionFailed', `conditional write of ${showKey(key)} failed: ${why}`, { key });
}

function aborted(key: string, signal: AbortSignal): StoreError {
  return new StoreError('Timeout', `request for ${showKey(key)} aborted by its signal: ${String(signal.reason)}`, { key, cause: signal.reason });
}
