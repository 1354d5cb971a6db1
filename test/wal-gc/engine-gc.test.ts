// WAL garbage collection in an engine that tiers (docs/tier-protocol.md [G]): while a producer
// writes through tiering with small segments, the WAL store holds only what is not tiered yet,
// the tier grows, and every record reads back from offset 0 (the tier, then the local log).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Passes run only when the test asks for one (an hour otherwise). */
const DRIVEN_BY_THE_TEST_MS = 3_600_000;
const ROUNDS = 10;
const RECORDS_PER_ROUND = 20;

test('the WAL store stays bounded while the tier grows, and every record reads back from 0', async () => {
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const metrics = new MetricsRegistry();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 4096, localRetentionBytes: 1 },
    wal: { store: wal, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
    metrics,
  });
  ferry.createTopic('events', { partitions: 1 });
  const walObjects: number[] = [];
  const tierObjects: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < RECORDS_PER_ROUND; i++) await ferry.produce('events', [{ value: `record ${round * RECORDS_PER_ROUND + i} `.padEnd(300, '.') }], { acks: 'all' });
    while ((await ferry.tierer!.tierDue()) > 0);
    ferry.enforceRetention();
    await ferry.walCollector!.collect();
    walObjects.push((await wal.list('wal/')).objects.length);
    tierObjects.push((await tier.list('tier/')).objects.length);
  }
  // One object per acks=all produce: without GC the WAL would hold all of them.
  expect(Math.max(...walObjects)).toBeLessThan(2 * RECORDS_PER_ROUND);
  expect(walObjects.at(-1)!).toBeLessThan((ROUNDS * RECORDS_PER_ROUND) / 4);
  expect(tierObjects.at(-1)!).toBeGreaterThan(tierObjects[0]!);
  expect(metrics.renderPrometheus()).toMatch(/ferry_wal_gc_deleted_objects_total [1-9]/);
  expect(ferry.localLogStartOffset('events', 0)).toBeGreaterThan(0); // reads from 0 need the tier
  const values: string[] = [];
  const done = new AbortController();
  for await (const record of ferry.consume('events', { fromOffset: 0, signal: done.signal })) {
    values.push(new TextDecoder().decode(record.value!).replace(/ \.*$/, ''));
    if (values.length === ROUNDS * RECORDS_PER_ROUND) done.abort();
  }
  expect(values).toEqual(Array.from({ length: ROUNDS * RECORDS_PER_ROUND }, (_, i) => `record ${i}`));
  await ferry.close();
});
