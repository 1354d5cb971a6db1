// Issue 24, finding 1, in-process: an engine that ships to a WAL store and tiers, reopened on an
// empty directory (a replaced instance), must delete nothing of what it acknowledged. At d904e31
// WAL GC took the empty topic registry for the list of live incarnations: its first pass deleted
// 20 of 20 WAL objects of the earlier stream, records never tiered and now lost for good. DI1
// (docs/tier-protocol.md): only a deletion record deletes; frames no record names are kept,
// counted and named in one line.
import { expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../../src/engine/index.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

const DRIVEN_BY_THE_TEST_MS = 3_600_000;
const RECORDS = 20;

function options(directory: string, wal: MemoryStore, tier: MemoryStore, metrics: MetricsRegistry, lines: string[]): EngineOptions {
  return {
    directory,
    wal: { store: wal, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier, control: new ControlStore(tier, ''), intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
    metrics,
    logger: (line: string) => void lines.push(line),
  };
}

async function dataObjectsOfEpoch0(wal: MemoryStore): Promise<number> {
  return (await wal.list('wal/w/0000000000/')).objects.length;
}

test('an engine reopened on an empty directory deletes none of its earlier WAL objects, and names the incarnation it keeps', async () => {
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const directory = tempDir();
  const first = await Engine.open(options(directory, wal, tier, new MetricsRegistry(), []));
  first.createTopic('orders', { partitions: 1 });
  for (let i = 0; i < RECORDS; i++) await first.produce('orders', [{ value: `record ${i}` }], { acks: 'all' });
  await first.close();
  const written = await dataObjectsOfEpoch0(wal);
  expect(written).toBeGreaterThanOrEqual(RECORDS);

  rmSync(directory, { recursive: true, force: true }); // the instance is replaced: its disk is empty
  const metrics = new MetricsRegistry();
  const lines: string[] = [];
  const second = await Engine.open(options(directory, wal, tier, metrics, lines));
  await second.walCollector!.collect();
  await second.walCollector!.collect();
  // The seal the reopen wrote is there too; nothing below it went.
  expect(await dataObjectsOfEpoch0(wal)).toBeGreaterThanOrEqual(written);
  expect(metrics.renderPrometheus()).toMatch(/^ferry_wal_gc_unknown_incarnations_total 1$/m);
  expect(lines.filter((line) => line.includes('keeps the frames of topic orders')).length).toBe(1);
  await second.close();
});

test('a topic the engine deleted has its deletion record, and then its frames go', async () => {
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const engine = await Engine.open(options(tempDir(), wal, tier, new MetricsRegistry(), []));
  engine.createTopic('gone', { partitions: 1 });
  for (let i = 0; i < 5; i++) await engine.produce('gone', [{ value: `record ${i}` }], { acks: 'all' });
  const id = engine.topics().find((topic) => topic.name === 'gone')!.id;
  await engine.deleteTopic('gone');
  expect(await new ControlStore(tier, '').read(`deleted-topics/${id}`)).not.toBeNull();
  engine.createTopic('after', { partitions: 1 });
  await engine.produce('after', [{ value: 'x' }], { acks: 'all' }); // an object above the deleted topic's, so they may go
  expect(await engine.walCollector!.collect()).toBeGreaterThanOrEqual(5);
  await engine.close();
});
