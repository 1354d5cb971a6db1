import { describe, expect, test } from 'bun:test';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { InstrumentedStore } from '../../src/store/instrumented.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { storeContract } from './contract.ts';

const PART_MIN = 1024;

// Measuring must not change a single behaviour the contract pins down.
storeContract(
  'instrumented memory store',
  async () => {
    const store = new InstrumentedStore(new MemoryStore({ multipartPartBytesMin: PART_MIN }), 'wal', new MetricsRegistry(), new ManualClock());
    return { store, cleanup: () => store.close() };
  },
  { conditional: true, multipartPartBytesMin: PART_MIN, listKeys: 300, deleteKeys: 1100 },
);

function sample(registry: MetricsRegistry, series: string): number | undefined {
  const line = registry
    .renderPrometheus()
    .split('\n')
    .find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('InstrumentedStore', () => {
  test('counts calls, failures by StoreError kind and body bytes, per role and operation', async () => {
    const registry = new MetricsRegistry();
    const store = new InstrumentedStore(new MemoryStore({ multipartPartBytesMin: 1 }), 'tier', registry, new ManualClock());
    await store.put('a', new Uint8Array(10));
    await store.put('a', new Uint8Array(3), { ifNoneMatch: '*' }).catch(() => {});
    await store.get('a');
    await store.get('missing').catch(() => {});
    const upload = await store.createMultipartUpload('m');
    await upload.complete([await upload.uploadPart(1, new Uint8Array(7))]);
    expect(sample(registry, 'ferry_object_store_requests_total{operation="put",store="tier"}')).toBe(2);
    expect(sample(registry, 'ferry_object_store_errors_total{error="PreconditionFailed",operation="put",store="tier"}')).toBe(1);
    expect(sample(registry, 'ferry_object_store_errors_total{error="NotFound",operation="get",store="tier"}')).toBe(1);
    expect(sample(registry, 'ferry_object_store_request_duration_seconds_count{operation="get",store="tier"}')).toBe(2);
    expect(sample(registry, 'ferry_object_store_requests_total{operation="upload_part",store="tier"}')).toBe(1);
    expect(sample(registry, 'ferry_object_store_requests_total{operation="multipart_complete",store="tier"}')).toBe(1);
    expect(sample(registry, 'ferry_object_store_uploaded_bytes_total{store="tier"}')).toBe(17); // the refused put sent nothing
    expect(sample(registry, 'ferry_object_store_downloaded_bytes_total{store="tier"}')).toBe(10);
    expect(sample(registry, 'ferry_object_store_requests_total{operation="list",store="tier"}')).toBeUndefined(); // made at first use
  });

  test('a call is timed on the injected clock, whatever it waits for', async () => {
    const registry = new MetricsRegistry();
    const clock = new ManualClock();
    const inner = new MemoryStore();
    const slow = Object.assign(Object.create(inner) as MemoryStore, {
      head: async (key: string) => {
        clock.advance(30);
        return inner.head(key);
      },
    });
    const store = new InstrumentedStore(slow, 'control', registry, clock);
    await store.head('x');
    expect(sample(registry, 'ferry_object_store_request_duration_seconds_sum{operation="head",store="control"}')).toBeCloseTo(0.03, 9);
    expect(sample(registry, 'ferry_object_store_request_duration_seconds_bucket{operation="head",store="control",le="0.025"}')).toBe(0);
    expect(sample(registry, 'ferry_object_store_request_duration_seconds_bucket{operation="head",store="control",le="0.05"}')).toBe(1);
  });
});
