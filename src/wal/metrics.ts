import { type BucketHistogram, type Counter, type MetricsRegistry, SIZE_BYTES_BUCKETS } from '../metrics/index.ts';
import type { WalWriterObserver, WalWriterStats } from './writer.ts';

const MS_PER_SECOND = 1000;

/** The WAL writer's metrics in a registry: upload latency, object size, produce-to-durable, in base units. */
export class WalMetrics implements WalWriterObserver {
  readonly uploadLatency: BucketHistogram;
  readonly objectSize: BucketHistogram;
  readonly produceToDurable: BucketHistogram;
  readonly #objects: Counter;
  readonly #bytes: Counter;
  readonly #retries: Counter;

  constructor(registry: MetricsRegistry) {
    this.uploadLatency = registry.histogram('ferry_wal_upload_latency_seconds', 'Time from the first PUT attempt of a WAL object to its success, retries included');
    this.objectSize = registry.histogram('ferry_wal_object_size_bytes', 'Size of closed WAL objects', { buckets: SIZE_BYTES_BUCKETS });
    this.produceToDurable = registry.histogram('ferry_wal_produce_to_durable_seconds', 'Time from handing a frame to the writer to its object being durable in order');
    this.#objects = registry.counter('ferry_wal_objects_total', 'WAL objects closed');
    this.#bytes = registry.counter('ferry_wal_bytes_total', 'Bytes of WAL objects closed');
    this.#retries = registry.counter('ferry_wal_upload_retries_total', 'WAL upload attempts that met a retriable fault (throttling, 5xx, a full disk) and were retried');
  }

  uploadLatencyMs(ms: number): void {
    this.uploadLatency.observe(ms / MS_PER_SECOND);
  }

  objectBytes(bytes: number): void {
    this.objectSize.observe(bytes);
    this.#objects.add();
    this.#bytes.add(bytes);
  }

  uploadRetry(): void {
    this.#retries.add();
  }

  produceToDurableMs(ms: number): void {
    this.produceToDurable.observe(ms / MS_PER_SECOND);
  }
}

/**
 * The current writer's queue, read at every scrape: `stats` is whichever writer is current then.
 * Returns what stops reading it.
 */
export function registerWalQueueGauges(registry: MetricsRegistry, stats: () => WalWriterStats): () => void {
  const queued = registry.gauge('ferry_wal_queued_objects', 'Closed WAL objects waiting for an upload slot');
  const inFlight = registry.gauge('ferry_wal_uploads_in_flight', 'WAL object uploads in progress');
  const buffered = registry.gauge('ferry_wal_buffered_bytes', 'Frame bytes handed to the WAL writer and not yet durable in the store');
  return registry.onCollect(() => {
    const now = stats();
    queued.set(now.queuedObjects);
    inFlight.set(now.uploadsInFlight);
    buffered.set(now.bufferedBytes);
  });
}
