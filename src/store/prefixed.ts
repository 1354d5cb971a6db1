import { isStoreError, StoreError } from './errors.ts';
import {
  KEY_BYTES_MAX,
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
} from './object-store.ts';
import type { StoreStats } from './stats.ts';
import { checkKey, invalidArgument, showKey } from './validate.ts';

/**
 * Any ObjectStore seen through a key prefix: every key goes in as `prefix + key` and comes back
 * without it, so several tenants, tests or clusters share one bucket or directory. Errors name
 * the caller's key, not the stored one. Closing it closes the inner store.
 */
export class PrefixedStore implements ObjectStore {
  readonly kind: string;
  /** What every key is prefixed with in the inner store. */
  readonly prefix: string;
  readonly #inner: ObjectStore;

  constructor(inner: ObjectStore, prefix: string) {
    if (prefix.length === 0) throw new StoreError('InvalidArgument', 'PrefixedStore: the prefix is empty; use the inner store itself');
    this.kind = inner.kind;
    this.prefix = prefix;
    this.#inner = inner;
    const sequential = inner.openSequentialWrite?.bind(inner);
    if (sequential !== undefined) this.openSequentialWrite = (key, options) => this.#sequentialWrite(sequential, key, options);
  }

  /** Present when the inner store has it. */
  readonly openSequentialWrite?: (key: string, options?: MultipartOptions) => Promise<SequentialWrite>;

  put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    return this.#call(key, () => this.#inner.put(this.#in(key), body, options));
  }

  get(key: string, options?: GetOptions): Promise<GetResult> {
    return this.#call(key, () => this.#inner.get(this.#in(key), options));
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.#call(key, async () => {
      const info = await this.#inner.head(this.#in(key));
      return info === null ? null : { ...info, key };
    });
  }

  async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const page = await this.#inner.list(this.prefix + prefix, options).catch((error: unknown) => this.#rethrow(error));
    const objects = page.objects.map((object) => ({ ...object, key: this.#out(object.key) }));
    return page.nextToken === undefined ? { objects } : { objects, nextToken: page.nextToken };
  }

  delete(key: string): Promise<void> {
    return this.#call(key, () => this.#inner.delete(this.#in(key)));
  }

  async deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    for (const key of keys) this.#checkKey(key);
    const result = await this.#inner.deleteMany(keys.map((key) => this.#in(key))).catch((error: unknown) => this.#rethrow(error));
    return { deleted: result.deleted.map((key) => this.#out(key)), failed: result.failed.map(({ key, error }) => ({ key: this.#out(key), error })) };
  }

  #sequentialWrite(open: NonNullable<ObjectStore['openSequentialWrite']>, key: string, options?: MultipartOptions): Promise<SequentialWrite> {
    return this.#call(key, async () => {
      const write = await open(this.#in(key), options);
      return {
        key,
        append: (chunks) => write.append(chunks).catch((error: unknown) => this.#rethrow(error)),
        finish: () => write.finish().catch((error: unknown) => this.#rethrow(error)),
        abort: () => write.abort().catch((error: unknown) => this.#rethrow(error)),
      };
    });
  }

  createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload> {
    return this.#call(key, async () => {
      const upload = await this.#inner.createMultipartUpload(this.#in(key), options);
      return {
        key,
        uploadId: upload.uploadId,
        uploadPart: (partNumber, body) => upload.uploadPart(partNumber, body).catch((error: unknown) => this.#rethrow(error)),
        complete: (parts) => upload.complete(parts).catch((error: unknown) => this.#rethrow(error)),
        abort: () => upload.abort().catch((error: unknown) => this.#rethrow(error)),
      };
    });
  }

  stats(): StoreStats {
    return this.#inner.stats();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  /** Checks the caller's key itself first, so a too-long key is reported as the caller wrote it. */
  async #call<T>(key: string, action: () => Promise<T>): Promise<T> {
    this.#checkKey(key);
    return action().catch((error: unknown) => this.#rethrow(error));
  }

  #checkKey(key: string): void {
    checkKey(key);
    const bytes = Buffer.byteLength(this.prefix + key, 'utf8');
    if (bytes > KEY_BYTES_MAX) throw invalidArgument(key, `key ${showKey(key)} is ${bytes} bytes of UTF-8 after the prefix ${showKey(this.prefix)}, longer than S3's limit of ${KEY_BYTES_MAX}`);
  }

  #in(key: string): string {
    return this.prefix + key;
  }

  #out(key: string): string {
    return key.startsWith(this.prefix) ? key.slice(this.prefix.length) : key;
  }

  /** The inner store's error with the caller's key in `key` and in the message. */
  #rethrow(error: unknown): never {
    if (!isStoreError(error) || error.key === undefined || !error.key.startsWith(this.prefix)) throw error;
    const key = this.#out(error.key);
    throw new StoreError(error.kind, error.message.replaceAll(JSON.stringify(error.key), JSON.stringify(key)), { key, cause: error });
  }
}
