import { StoreError } from '../store/errors.ts';
import type { MultipartUpload, PutResult, SequentialWrite } from '../store/object-store.ts';
import { concatBytes } from '../util/bytes.ts';
import type { SequentialWrites } from './sequential-writes.ts';

/** What a sequential write needs of the store view that opened it (store.ts). */
export interface SequentialWriteHost {
  /** Sends one request of this process: its answer passes the process's gate, and it fails unsent while the store is unreachable. */
  call<T>(request: () => Promise<T>): Promise<T>;
  /** Publishes `body` under the key as one put, its condition checked at the store and a lost answer judged by reading back. */
  publish(body: Uint8Array): Promise<PutResult>;
  /** The run's counts. */
  readonly counts: SequentialWrites;
}

/**
 * The simulated store's object written front to back (ObjectStore.openSequentialWrite), as an
 * S3-like store would take a conditional create streamed in pieces. Each append is one request
 * (an UploadPart of the shared MemoryStore's multipart upload, opened with the write: its latency,
 * its background faults, its count), and the store holds what it carried from the moment it took
 * effect there, whether the process still lives to hear of it or not. Nothing is visible under the
 * key until `finish`, which publishes the whole as one put: the condition (ifNoneMatch) is applied
 * by the store atomically, every take-effect is told to the run's audits (MemoryStore's onPut, the
 * view's WAL writes), and an answer lost after the put's effect is judged by reading the key back,
 * as every conditional put of the view is (src/store/conditional-write.ts).
 *
 * An append's bytes are taken as its request takes effect, not when it is called: a caller that
 * changes a chunk before the append resolves publishes the changed bytes, as a real store streaming
 * the request body would. A failed append (before its effect or after) leaves a hole: the write can
 * then only be aborted, as the file store's. The finish's put carries the bytes once more (S3
 * assembles the parts it holds instead): only the latency and the byte counts differ.
 */
export class SimSequentialWrite implements SequentialWrite {
  readonly key: string;
  readonly #upload: MultipartUpload;
  readonly #host: SequentialWriteHost;
  /** Each append's bytes as they reached the store, in order. */
  readonly #runs: Uint8Array[] = [];
  #partNumber = 0;
  #appending = false;
  #state: 'open' | 'holed' | 'finishing' | 'done' = 'open';

  constructor(key: string, upload: MultipartUpload, host: SequentialWriteHost) {
    this.key = key;
    this.#upload = upload;
    this.#host = host;
  }

  append(chunks: readonly Uint8Array[]): Promise<void> {
    if (this.#state !== 'open') return Promise.reject(this.#misuse(this.#state === 'holed' ? 'append after a failed append' : 'append after finish or abort'));
    if (this.#appending) return Promise.reject(this.#misuse('append while an append is under way (one at a time: the bytes go in order)'));
    const written = chunks.filter((chunk) => chunk.length > 0);
    if (written.length === 0) return Promise.resolve();
    this.#appending = true;
    const partNumber = ++this.#partNumber;
    this.#host.counts.appended();
    const arrived = () => void this.#runs.push(concatBytes(written)); // at the store, before the process hears
    return this.#host
      .call(() => this.#upload.uploadPart(partNumber, concatBytes(written)).then(arrived))
      .catch((error: unknown) => {
        if (this.#state === 'open') this.#state = 'holed';
        this.#host.counts.failed();
        throw error;
      })
      .finally(() => {
        this.#appending = false;
      });
  }

  async finish(): Promise<PutResult> {
    if (this.#state !== 'open') throw this.#misuse(this.#state === 'holed' ? 'finish after a failed append' : 'finish after finish or abort');
    if (this.#appending) throw this.#misuse('finish while an append is under way');
    this.#state = 'finishing';
    try {
      const result = await this.#host.publish(concatBytes(this.#runs));
      this.#host.counts.finished(this.key);
      return result;
    } catch (error) {
      this.#host.counts.failed();
      throw error;
    } finally {
      this.#state = 'done';
      // The store lets go of the pieces (S3's completion consumes them): its own bookkeeping, no request of this process.
      void this.#upload.abort().catch(() => undefined);
    }
  }

  async abort(): Promise<void> {
    if (this.#state === 'finishing' || this.#state === 'done') return;
    this.#state = 'done';
    await this.#host.call(() => this.#upload.abort());
  }

  #misuse(what: string): StoreError {
    return new StoreError('InvalidArgument', `sequential write of ${this.key}: ${what}`, { key: this.key });
  }
}
