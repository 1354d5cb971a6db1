// WAL garbage collection in a cluster broker (docs/tier-protocol.md [G1], GI1): it collects its own
// stream up to the tier's end, and a deleted incarnation's frames on a fresh read of the cluster's
// topic records (the engine's own registry is not the truth in a cluster).
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { parseWalObjectKey } from '../../src/wal/keys.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

const T0 = Date.now();

async function walSequences(store: MemoryStore): Promise<number[]> {
  return (await store.list('wal/')).objects.flatMap((object) => parseWalObjectKey('', object.key)?.sequence ?? []).sort((a, b) => a - b); // floor marks are not objects of the stream
}

test("a cluster broker collects its stream up to the tier end, and a deleted topic's objects once its record is gone", async () => {
  const store = new MemoryStore();
  const broker = await startTieredBroker(store, 1, running);
  await broker.context.topology.createTopic('t', 1);
  const engine = broker.context.engine;
  await until(() => engine.serves('t', 0), 'the adoption');
  for (let i = 0; i < 30; i++) await (await engine.appendBatches('t', 0, buildRecordBatch([{ value: `v${i}`.padEnd(200, '.'), timestamp: T0 }], { nowMs: T0 }))).committed;
  const written = (await walSequences(store)).length;
  expect(await engine.walCollector!.collect()).toBe(0); // nothing tiered yet
  while ((await engine.tierer!.tierDue()) > 0);
  const deleted = await engine.walCollector!.collect();
  expect(deleted).toBeGreaterThan(0);
  expect((await walSequences(store)).length).toBe(written - deleted);
  await broker.context.topology.deleteTopic('t');
  expect((await store.list('topics/')).objects).toHaveLength(0); // the delete removes the topic record last
  await engine.walCollector!.collect();
  expect((await walSequences(store)).length).toBe(1); // the highest object of the stream being written stays [G4]
});
