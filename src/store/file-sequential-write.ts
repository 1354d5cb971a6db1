import { open, type FileHandle } from 'node:fs/promises';
import type { FileSync } from '../util/file-sync.ts';
import type { DirectAppender, DirectWrites } from './direct-write.ts';
import { StoreError } from './errors.ts';
import { chainedEtag, contentEtag } from './etag.ts';
import { encodeHeader, OBJECT_HEADER_BYTES, removeQuietly, writeAllAt, writeFully } from './file-object.ts';
import type { PutResult, SequentialWrite } from './object-store.ts';
import type { RequestClass } from './stats.ts';

/** What a sequential write needs of its FileStore. */
export interface FileSequentialWriteHost {
  /** Runs one step as a store request: counted, awaited by close, its filesystem errors mapped. */
  run<T>(requestClass: RequestClass, bytesIn: number, what: string, action: () => Promise<T>): Promise<T>;
  /** Publishes the complete, fsynced `temporary` file under the key (FileStore's #publish): true if renamed away. */
  publish(temporary: string): Promise<boolean>;
  readonly sync: boolean;
  readonly files: FileSync;
  /** Writes around the page cache where the filesystem allows (direct-write.ts); null: buffered. */
  readonly direct: DirectWrites | null;
}

/**
 * The file store's object written front to back (ObjectStore.openSequentialWrite): chunks go
 * straight into one temporary object file, whose header gets the ETag at the end; finishing
 * fsyncs it and publishes it like a put. A multipart upload writes every byte twice here (its
 * part files, then their copy into the assembled file at completion, read back in between): the
 * tier streams each segment out this way, and a 32 MiB piece is written once instead.
 *
 * Where the store writes direct, the appended bytes go around the page cache in whole blocks
 * (DirectAppender): a segment piece is read from the tier rarely, never soon after.
 *
 * The ETag is in S3's multipart form over the appended chunks (chainedEtag: XXH64 chained through
 * them, a dash, their count), computed as they come, in constant memory. A crash before `finish`
 * leaves only the temporary file, which is never listed and is swept at a later open.
 */
export class FileSequentialWrite implements SequentialWrite {
  readonly key: string;
  readonly #host: FileSequentialWriteHost;
  readonly #temporary: string;
  readonly #handle: FileHandle;
  readonly #appender: DirectAppender | null;
  /** XXH64 of the chunks so far, each seeded with the hash of those before (chainedEtag). */
  #hash = 0n;
  #chunkCount = 0;
  #position = OBJECT_HEADER_BYTES;
  #appending = false;
  #state: 'open' | 'finishing' | 'done' = 'open';

  private constructor(key: string, host: FileSequentialWriteHost, temporary: string, handle: FileHandle, appender: DirectAppender | null) {
    this.key = key;
    this.#host = host;
    this.#temporary = temporary;
    this.#handle = handle;
    this.#appender = appender;
  }

  /** Creates the temporary file `temporary` (which must not exist) for `key`'s object. */
  static async create(key: string, host: FileSequentialWriteHost, temporary: string): Promise<FileSequentialWrite> {
    const handle = await open(temporary, 'wx');
    try {
      const appender = host.direct === null ? null : await host.direct.appender(temporary, OBJECT_HEADER_BYTES);
      return new FileSequentialWrite(key, host, temporary, handle, appender);
    } catch (error) {
      await handle.close().catch(() => undefined);
      await removeQuietly(temporary);
      throw error;
    }
  }

  append(chunks: readonly Uint8Array[]): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(this.#misuse('append after finish or abort'));
    if (this.#appending) return Promise.reject(this.#misuse('append while an append is under way (one at a time: the bytes go in order)'));
    const written = chunks.filter((chunk) => chunk.length > 0);
    if (written.length === 0) return Promise.resolve();
    this.#appending = true;
    const position = this.#position;
    let bytes = 0;
    for (const chunk of written) {
      bytes += chunk.length;
      this.#hash = Bun.hash.xxHash64(chunk, this.#hash);
    }
    this.#position += bytes;
    this.#chunkCount += written.length;
    return this.#host
      .run('uploadPart', bytes, 'append to the sequential write of', () => (this.#appender === null ? writeAllAt(this.#handle, written, position) : this.#appender.append(written)))
      .catch(async (error: unknown) => {
        await this.abort(); // a short or failed write leaves a hole: the object can never be finished
        throw error;
      })
      .finally(() => {
        this.#appending = false;
      });
  }

  async finish(): Promise<PutResult> {
    if (this.#state !== 'open') throw this.#misuse('finish after finish or abort');
    if (this.#appending) throw this.#misuse('finish while an append is under way');
    this.#state = 'finishing';
    const etag = this.#chunkCount === 0 ? contentEtag(new Uint8Array()) : chainedEtag(this.#hash, this.#chunkCount);
    let renamed = false;
    try {
      return await this.#host.run('multipartComplete', 0, 'finish the sequential write of', async () => {
        await this.#appender?.finishInto(this.#handle); // the rest of the last block, before the header's block is read back
        await writeFully(this.#handle, encodeHeader(etag), 0);
        if (this.#host.sync) await this.#host.files.sync(this.#handle.fd); // the bytes are durable before any name points at them
        await this.#handle.close();
        renamed = await this.#host.publish(this.#temporary);
        return { etag };
      });
    } finally {
      this.#state = 'done';
      await this.#appender?.close().catch(() => undefined);
      await this.#handle.close().catch(() => undefined);
      if (!renamed) await removeQuietly(this.#temporary);
    }
  }

  async abort(): Promise<void> {
    if (this.#state !== 'open') return;
    this.#state = 'done';
    const discard = async (): Promise<void> => {
      await this.#appender?.close().catch(() => undefined);
      await this.#handle.close().catch(() => undefined);
      await removeQuietly(this.#temporary);
    };
    try {
      await this.#host.run('multipartAbort', 0, 'abort the sequential write of', discard);
    } catch (error) {
      await discard(); // a closed store refuses the request, but the file is still this write's to remove
      throw error;
    }
  }

  #misuse(what: string): StoreError {
    return new StoreError('InvalidArgument', `sequential write of ${this.key}: ${what}`, { key: this.key });
  }
}
