import { type Counter, type MetricsRegistry, SIZE_BYTES_LAYOUT, type ValueHistogram } from '../metrics/index.ts';
import type { WalWriterObserver } from './writer.ts';

/** The WAL writer's metrics in a registry (issue: upload latency, object size, produce-to-durable). */
export class WalMetrics implements WalWriterObserver {
  readonly uploadLatency: ValueHistogram;
  readonly objectSize: ValueHistogram;
  readonly produceToDurable: ValueHistogram;
  readonly #objects: Counter;
  readonly #bytes: Counter;
  readonly #retries: Counter;

  constructor(registry: MetricsRegistry) {
    this.uploadLatency = registry.histogram('ferry_wal_upload_latency_ms', 'Time from the first PUT attempt of a WAL object to its success, retries included');
    this.objectSize = registry.histogram('ferry_wal_object_bytes', 'Size of closed WAL objects', { layout: SIZE_BYTES_LAYOUT });
    this.produceToDurable = registry.histogram('ferry_wal_produce_to_durable_ms', 'Time from handing a frame to the writer to its object being durable in order');
    this.#objects = registry.counter('ferry_wal_objects_total', 'WAL objects closed');
    this.#bytes = registry.counter('ferry_wal_bytes_total', 'Bytes of WAL objects closed');
    this.#retries = registry.counter('ferry_wal_upload_retries_total', 'WAL upload attempts that met a retriable fault (throttling, 5xx, a full disk) and were retried');
  }

  uploadLatencyMs(ms: number): void {
    this.uploadLatency.record(ms);
  }

  objectBytes(bytes: number): void {
    this.objectSize.record(bytes);
    this.#objects.add();
    this.#bytes.add(bytes);
  }

  uploadRetry(): void {
    this.#retries.add();
  }

  produceToDurableMs(ms: number): void {
    this.produceToDurable.record(ms);
  }
}
