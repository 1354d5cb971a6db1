// Adversarial review of issue 11, guarantee 7 ("metrics lying"). Failed on main at 8c03420; fixed (a failed pass keeps the last count).
//
// What it shows: the gauge ferry_wal_gc_held_objects ("objects of this broker's WAL streams still
// in the store after the collector's last pass") drops to 0 when the pass cannot list the streams:
// WalCollector #collectWriter returns { held: 0 } when listEpochs fails, and #collectWriter's loop
// adds `pass?.held ?? 0` for a stream whose pass failed (src/wal-gc/collector.ts). So exactly while
// GC is failing and the WAL store grows (S3 Express at five times S3 Standard), the gauge an
// operator would alert on says nothing is held. Severity: cost (a silent unbounded WAL).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';

const DRIVEN_BY_THE_TEST_MS = 3_600_000;

/** `store`, whose LISTs fail while `failing` is set (a throttled or unreachable WAL store). */
function listsFailing(store: MemoryStore): { view: ObjectStore; fail(on: boolean): void } {
  let failing = false;
  const view = new Proxy(store, {
    get: (target, name) => {
      if (name === 'list' && failing) return () => Promise.reject(new StoreError('Throttled', 'injected: LIST throttled'));
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { view, fail: (on) => void (failing = on) };
}

function heldGauge(metrics: MetricsRegistry): number {
  const match = /^ferry_wal_gc_held_objects (\d+)/m.exec(metrics.renderPrometheus());
  return match === null ? -1 : Number(match[1]);
}

test('the held-objects gauge does not fall to 0 while the collector cannot list the WAL', async () => {
  const wal = new MemoryStore();
  const walView = listsFailing(wal);
  const tier = new MemoryStore();
  const metrics = new MetricsRegistry();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 4096 },
    wal: { store: walView.view, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
    metrics,
  });
  ferry.createTopic('events', { partitions: 1 });
  for (let i = 0; i < 30; i++) await ferry.produce('events', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  await ferry.walCollector!.collect(); // nothing tiered yet: every object is held
  const held = (await wal.list('wal/')).objects.length;
  expect(heldGauge(metrics)).toBe(held);

  walView.fail(true);
  await ferry.walCollector!.collect();
  expect(metrics.renderPrometheus()).toMatch(/ferry_wal_gc_failures_total [1-9]/);
  expect((await wal.list('wal/')).objects.length).toBe(held); // nothing was deleted
  expect(heldGauge(metrics)).toBe(held); // FAILS: 0
  walView.fail(false);
  await ferry.close();
});
