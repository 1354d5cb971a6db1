// Review finding (low, and older than a715ab3: the cluster serializes its calls through
// HeldPartitions.exclusive, the
// engine does not): two startNewWalEpoch calls that overlap each fence-check the same writer (the
// second retire is a no-op), then each renews: the engine ends writing the second new epoch while
// the first call resolved with a stream nothing writes. A caller that publishes the stream it got
// (PartitionClaims.#startNewEpoch publishes it in the broker record) would name a stream that never
// receives an object while acknowledged writes go to another.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

test('overlapping startNewWalEpoch calls resolve with the stream the engine then writes', async () => {
  const store = new MemoryStore();
  const engine = await Engine.open({ directory: tempDir(), cluster: managedBy(), wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 1 } }, report: () => {} });
  await engine.adoptPartition('t', idOf('t'), 0, 1, async () => {});
  await engine.produce('t', [{ value: 'a' }], { partition: 0, acks: 'all' });

  const [first, second] = await Promise.all([engine.startNewWalEpoch(), engine.startNewWalEpoch()]);
  const writing = engine.wal!.config.stream;
  expect(first).toEqual(writing); // first is epoch 1, the engine writes epoch 2
  expect(second).toEqual(writing);
  await engine.close();
});
