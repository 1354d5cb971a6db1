// Review of issue 12 (promise 3): after DeleteRecords answers, no read returns records below the
// low watermark. A follower learns the new log start only at its next scan of the partition
// record (ClusterNode scan -> followLogStart), yet consumers are sent to followers (KIP-392
// preferred read replica, handlers/fetch.ts) and a follower serves fetches: until that scan, a
// follower serves the deleted records.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);
/** Ferry's default scan interval (--scan-interval-ms): the window in which the follower is stale. */
const SCAN_INTERVAL_MS = 1000;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 5000, scanIntervalMs: SCAN_INTERVAL_MS },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

// FINDING 6
test('right after a DeleteRecords success, the follower a consumer may be sent to serves nothing below the low watermark', async () => {
  const store = new MemoryStore();
  const brokers = [await start(store, 1), await start(store, 2)];
  await brokers[0]!.context.topology.createTopic('t', 1, 2);
  await until(() => brokers.some((b) => b.context.engine.leads('t', 0)) && brokers.every((b) => b.context.engine.serves('t', 0)), 'a leader and a follower', 30_000);
  const leader = brokers.find((b) => b.context.engine.leads('t', 0))!;
  const follower = brokers.find((b) => b !== leader)!;
  for (let i = 0; i < 10; i++) await leader.context.engine.produce('t', [{ value: `record ${i}` }], { partition: 0, acks: 'all' });
  await until(() => follower.context.engine.logEndOffset('t', 0) === 10, 'the follower holding the records', 30_000);
  expect(await leader.context.topology.deleteRecords('t', 0, 5)).toBe(5);
  let served: number[] = [];
  try {
    served = (await follower.context.engine.fetchWithTier('t', 0, 0)).batches.map((batch) => batch.baseOffset).filter((offset) => offset < 5);
  } catch (error) {
    if (!isFerryError(error, 'OffsetOutOfRange')) throw error;
  }
  expect(served).toEqual([]);
});
