import type { BucketHistogram, Counter, MetricsRegistry } from '../metrics/index.ts';
import type { Clock } from '../util/clock.ts';
import { isStoreError } from './errors.ts';
import type {
  DeleteManyResult,
  GetOptions,
  GetResult,
  ListOptions,
  ListPage,
  MultipartOptions,
  MultipartUpload,
  ObjectInfo,
  ObjectStore,
  PutOptions,
  PutResult,
  SequentialWrite,
  UploadedPart,
} from './object-store.ts';
import type { StoreStats } from './stats.ts';

/**
 * What a store is for in a broker: the `store` label (a store serving two roles is wrapped once per
 * role). tier-records: the tier records and deletion records (docs/tier-protocol.md), control
 * records kept beside the cluster's or, alone, in the WAL store.
 */
export type StoreRole = 'wal' | 'tier' | 'control' | 'tier-records';

/** The `operation` label: one per ObjectStore call, multipart steps apart. */
export type StoreOperation = 'put' | 'get' | 'head' | 'list' | 'delete' | 'delete_many' | 'multipart_create' | 'upload_part' | 'multipart_complete' | 'multipart_abort';

const MS_PER_SECOND = 1000;
/** The error label of a failure that is no StoreError (a bug, a runtime fault). */
const ERROR_OTHER = 'Other';

interface OperationMetrics {
  readonly requests: Counter;
  readonly duration: BucketHistogram;
}

/**
 * Any ObjectStore, measured: per operation, calls (ferry_object_store_requests_total), their
 * duration with the backend's retries inside (ferry_object_store_request_duration_seconds),
 * failures by StoreError kind (ferry_object_store_errors_total: NotFound and PreconditionFailed
 * included, they are answers some protocols expect), and body bytes each way. Labels are bounded:
 * four roles, ten operations, the StoreError kinds. Behaviour is the inner store's, unchanged.
 */
export class InstrumentedStore implements ObjectStore {
  readonly kind: string;
  readonly #inner: ObjectStore;
  readonly #registry: MetricsRegistry;
  readonly #clock: Clock;
  readonly #role: StoreRole;
  readonly #operations = new Map<StoreOperation, OperationMetrics>();
  readonly #errors = new Map<string, Counter>();
  readonly #uploaded: Counter;
  readonly #downloaded: Counter;

  constructor(inner: ObjectStore, role: StoreRole, registry: MetricsRegistry, clock: Clock) {
    this.kind = inner.kind;
    this.#inner = inner;
    this.#role = role;
    this.#registry = registry;
    this.#clock = clock;
    const labels = { store: role };
    this.#uploaded = registry.counter('ferry_object_store_uploaded_bytes_total', 'Body bytes sent to the object store (puts and parts), by store role', { labels });
    this.#downloaded = registry.counter('ferry_object_store_downloaded_bytes_total', 'Body bytes read from the object store (gets), by store role', { labels });
    const sequential = inner.openSequentialWrite?.bind(inner);
    if (sequential !== undefined) this.openSequentialWrite = (key, options) => this.#sequentialWrite(sequential, key, options);
  }

  /** Present when the inner store has it: its steps timed as the multipart steps they stand for. */
  readonly openSequentialWrite?: (key: string, options?: MultipartOptions) => Promise<SequentialWrite>;

  async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    const result = await this.#timed('put', () => this.#inner.put(key, body, options));
    this.#uploaded.add(body.length);
    return result;
  }

  async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await this.#timed('get', () => this.#inner.get(key, options));
    this.#downloaded.add(result.body.length);
    return result;
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.#timed('head', () => this.#inner.head(key));
  }

  list(prefix: string, options?: ListOptions): Promise<ListPage> {
    return this.#timed('list', () => this.#inner.list(prefix, options));
  }

  delete(key: string): Promise<void> {
    return this.#timed('delete', () => this.#inner.delete(key));
  }

  deleteMany(keys: readonly string[]): Promise<DeleteManyResult> {
    return this.#timed('delete_many', () => this.#inner.deleteMany(keys));
  }

  async createMultipartUpload(key: string, options?: MultipartOptions): Promise<MultipartUpload> {
    const upload = await this.#timed('multipart_create', () => this.#inner.createMultipartUpload(key, options));
    return {
      key: upload.key,
      uploadId: upload.uploadId,
      uploadPart: async (partNumber: number, body: Uint8Array): Promise<UploadedPart> => {
        const part = await this.#timed('upload_part', () => upload.uploadPart(partNumber, body));
        this.#uploaded.add(body.length);
        return part;
      },
      complete: (parts) => this.#timed('multipart_complete', () => upload.complete(parts)),
      abort: () => this.#timed('multipart_abort', () => upload.abort()),
    };
  }

  async #sequentialWrite(open: NonNullable<ObjectStore['openSequentialWrite']>, key: string, options?: MultipartOptions): Promise<SequentialWrite> {
    const write = await this.#timed('multipart_create', () => open(key, options));
    return {
      key: write.key,
      append: async (chunks: readonly Uint8Array[]): Promise<void> => {
        await this.#timed('upload_part', () => write.append(chunks));
        for (const chunk of chunks) this.#uploaded.add(chunk.length);
      },
      finish: () => this.#timed('multipart_complete', () => write.finish()),
      abort: () => this.#timed('multipart_abort', () => write.abort()),
    };
  }

  stats(): StoreStats {
    return this.#inner.stats();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  async #timed<T>(operation: StoreOperation, call: () => Promise<T>): Promise<T> {
    const metrics = this.#metricsOf(operation);
    const startedMs = this.#clock.monotonicMs();
    try {
      return await call();
    } catch (error) {
      this.#errorCounter(operation, isStoreError(error) ? error.kind : ERROR_OTHER).add();
      throw error;
    } finally {
      metrics.requests.add();
      metrics.duration.observe((this.#clock.monotonicMs() - startedMs) / MS_PER_SECOND);
    }
  }

  /** Series are made at an operation's first call: a role uses a few of the ten. */
  #metricsOf(operation: StoreOperation): OperationMetrics {
    let metrics = this.#operations.get(operation);
    if (metrics === undefined) {
      const labels = { store: this.#role, operation };
      metrics = {
        requests: this.#registry.counter('ferry_object_store_requests_total', 'Object store calls, by store role and operation (retries inside a call count once)', { labels }),
        duration: this.#registry.histogram('ferry_object_store_request_duration_seconds', 'Duration of object store calls, retries and backoff included, by store role and operation', { labels }),
      };
      this.#operations.set(operation, metrics);
    }
    return metrics;
  }

  #errorCounter(operation: StoreOperation, error: string): Counter {
    const key = `${operation}/${error}`;
    let counter = this.#errors.get(key);
    if (counter === undefined) {
      counter = this.#registry.counter('ferry_object_store_errors_total', 'Object store calls that failed, by store role, operation and StoreError kind', {
        labels: { store: this.#role, operation, error },
      });
      this.#errors.set(key, counter);
    }
    return counter;
  }
}
