// Review of issue 9 finding 6 (followers follow leadership changes) with finding 10 (KIP-320):
// a broker that stays a follower of a partition across a change of leader must serve it in the new
// leader epoch. Metadata tells consumers the new epoch; a KIP-392 consumer sent to this follower
// names it in current_leader_epoch, and a follower still in the old epoch answers
// UNKNOWN_LEADER_EPOCH for ever (the consumer retries and never reads).
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

const brokers: Broker[] = [];
afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

async function until(condition: () => boolean, what: string, waitMs = 20_000): Promise<void> {
  const deadline = performance.now() + waitMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

test('a follower that stays a follower across a leader change serves the partition in the new leader epoch', async () => {
  const store = new MemoryStore();
  for (let nodeId = 1; nodeId <= 3; nodeId++) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
        engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  const kafka = new Kafka({ clientId: 'epochs', brokers: brokers.map((b) => `127.0.0.1:${b.port}`), logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'e', numPartitions: 1, replicationFactor: 3 }] });
  await admin.disconnect();
  await until(() => brokers.every((b) => b.context.engine.serves('e', 0)) && brokers.some((b) => b.context.engine.leads('e', 0)), 'a leader and two followers');
  const first = brokers.find((b) => b.context.engine.leads('e', 0))!;
  const epochBefore = first.context.engine.leaderEpoch('e', 0);
  await first.stop(); // resigns its lease: another broker claims the partition at the next epoch
  brokers.splice(brokers.indexOf(first), 1);
  await until(() => brokers.some((b) => b.context.engine.leads('e', 0)), 'a new leader');
  const leader = brokers.find((b) => b.context.engine.leads('e', 0))!;
  const follower = brokers.find((b) => b !== leader)!;
  expect(leader.context.engine.leaderEpoch('e', 0)).toBe(epochBefore + 1);
  await until(() => follower.context.engine.serves('e', 0), 'the other broker to follow it');
  const served = () => (follower.context.engine.serves('e', 0) ? follower.context.engine.leaderEpoch('e', 0) : null);
  await until(() => served() === epochBefore + 1, 'the follower to serve the new epoch', 3000).catch(() => {});
  expect({ followerEpoch: served(), leaderEpoch: leader.context.engine.leaderEpoch('e', 0) }).toEqual({ followerEpoch: epochBefore + 1, leaderEpoch: epochBefore + 1 });
});
