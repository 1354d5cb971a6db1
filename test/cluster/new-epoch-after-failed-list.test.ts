// [C7] A cluster broker whose writer was fenced by a replacement under the same writer id (one
// started while this process was paused) starts its new writer epoch only once a LIST of the
// store said which epochs that id used: a failed one leaves the epoch to the next scan, which
// lands past the replacement's, and serves the partition again through it. Failed when written:
// the failed LIST was taken for an empty store, and the broker wrote the replacement's epoch 1.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const WRITER_ID = 'broker-1';

const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const one of running.splice(0)) await one.stop().catch(() => {});
});

async function startBroker(store: MemoryStore, lines: string[]): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: WRITER_ID, config: { uploadIntervalMs: 1 } } },
    log: (line: string) => lines.push(line),
  });
  running.push(broker);
  return broker;
}

/** Another process under the same writer id: it seals the broker's epoch 0 ([F]) and writes epoch 1. */
async function replacementWritesEpochOne(store: MemoryStore): Promise<void> {
  const engine = await Engine.open({ directory: tempDir(), cluster: managedBy(), wal: { store, writerId: WRITER_ID, config: { uploadIntervalMs: 1 } } });
  running.push({ stop: () => engine.close() });
  await engine.adoptPartition('elsewhere', idOf('elsewhere'), 0, 1, async () => {});
  await engine.produce('elsewhere', [{ value: 'x' }], { partition: 0, acks: 'all' });
  expect(engine.wal!.config.stream.epoch).toBe(1);
}

test('a failed LIST at a new writer epoch leaves it to the next scan, which lands past every stored epoch', async () => {
  const store = new MemoryStore();
  const lines: string[] = [];
  const broker = await startBroker(store, lines);
  const engine = broker.context.engine;
  await broker.context.topology.createTopic('t', 1);
  await until(() => engine.serves('t', 0), 'the first adoption');
  await engine.produce('t', [{ value: 'a' }], { partition: 0, acks: 'all' });
  await replacementWritesEpochOne(store);

  store.injectFault({ operation: 'list', kind: 'Unavailable', keyPrefix: `wal/${WRITER_ID}/` });
  await expect(engine.produce('t', [{ value: 'b' }], { partition: 0, acks: 'all' })).rejects.toThrow(); // the seal fences it
  await until(() => engine.serves('t', 0) && engine.wal!.config.stream.epoch > 0, 'the adoption through a new epoch');

  expect(engine.wal!.config.stream.epoch).toBe(2); // past the replacement's 1
  expect(lines.some((line) => line.includes(`could not list the WAL epochs of writer ${WRITER_ID}`))).toBe(true);
  expect(lines.filter((line) => line.includes(`WAL writer ${WRITER_ID} epoch 0 fenced`)).length).toBe(1);
  expect(lines.some((line) => line.includes('now writing epoch 1'))).toBe(false);
  const values = engine.fetch('t', 0, 0).batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
  expect(values).toEqual(['a']); // 'b' was never acknowledged: the fenced writer shipped nothing of it
});
