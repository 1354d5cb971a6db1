// Issue 9 findings 12 and 13 on in-process cluster brokers: a follower serves only what its leader
// committed (it learns the high watermark from the answers to its progress reports), and progress
// counts only from a live replica of the partition.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const brokers: Broker[] = [];

afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

async function startBrokers(count: number, minInsyncReplicas: number): Promise<{ store: MemoryStore; kafka: Kafka }> {
  const store = new MemoryStore();
  for (let nodeId = 1; nodeId <= count; nodeId++) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        minInsyncReplicas,
        cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
        engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  return { store, kafka: new Kafka({ clientId: 'replica-progress', brokers: brokers.map((b) => `127.0.0.1:${b.port}`), logLevel: logLevel.NOTHING, retry: { retries: 3 } }) };
}

function highWatermark(broker: Broker, topic: string): number | null {
  return broker.context.engine.serves(topic, 0) ? broker.context.engine.fetch(topic, 0, 0, { maxBytes: 0 }).highWatermark : null;
}

function logEnd(broker: Broker, topic: string): number | null {
  return broker.context.engine.serves(topic, 0) ? broker.context.engine.logEndOffset(topic, 0) : null;
}

async function leaderAndFollower(kafka: Kafka, topic: string, replicationFactor: number): Promise<{ leader: Broker; follower: Broker }> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor }] });
  await admin.disconnect();
  let leader: Broker | undefined;
  let follower: Broker | undefined;
  await until(() => {
    leader = brokers.find((b) => b.context.engine.leads(topic, 0));
    follower = brokers.find((b) => b !== leader && b.context.engine.serves(topic, 0));
    return leader !== undefined && follower !== undefined;
  }, 'a leader and a follower');
  return { leader: leader!, follower: follower! };
}

test('a cluster follower never serves past the high watermark of its leader (finding 12), and learns it from the answers to its reports', async () => {
  // min.insync.replicas 3 with two live brokers: the leader can commit nothing past what was there.
  const { kafka } = await startBrokers(2, 3);
  const { leader, follower } = await leaderAndFollower(kafka, 'capped', 3);
  const producer = kafka.producer();
  await producer.connect();
  for (let i = 0; i < 5; i++) await producer.send({ topic: 'capped', acks: 1, messages: [{ value: `c-${i}` }] });
  await until(() => logEnd(follower, 'capped') === 5, 'the follower to apply the five records');
  expect(highWatermark(leader, 'capped')).toBe(0);
  expect(highWatermark(follower, 'capped')).toBe(0); // applied, but not committed: a KIP-392 reader must not see them

  // min.insync.replicas 2 (a topic of replication factor 2): the follower's high watermark follows the leader's.
  const second = await leaderAndFollower(kafka, 'followed', 2);
  for (let i = 0; i < 5; i++) await producer.send({ topic: 'followed', acks: -1, messages: [{ value: `f-${i}` }] });
  await producer.disconnect();
  expect(highWatermark(second.leader, 'followed')).toBe(5);
  await until(() => highWatermark(second.follower, 'followed') === 5, "the follower to learn the leader's high watermark");
});

test('a replica Fetch from a broker that is not a live replica of the partition changes nothing (finding 13)', async () => {
  const { kafka } = await startBrokers(1, 2);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'lonely', numPartitions: 1, replicationFactor: 2 }] });
  await admin.disconnect();
  const [broker] = brokers;
  await until(() => broker!.context.engine.leads('lonely', 0), 'the partition to be led');
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  const outcome = producer.send({ topic: 'lonely', acks: -1, timeout: 1500, messages: [{ value: 'needs a real follower' }] }).then(
    () => 'acknowledged',
    (error: unknown) => String(error),
  );
  // Forged progress: node ids that hold no lease (2, 99) and this broker's own id, each claiming far more than exists.
  const answers: number[] = [];
  const forgers = [2, 99, 1].map((replicaId) => new ProgressReporter(replicaId, '127.0.0.1', broker!.port, { clock: systemClock, highWatermark: (_t, _p, hw) => answers.push(hw) }));
  for (let round = 0; round < 10; round++) {
    for (const forger of forgers) forger.report('lonely', 0, 1_000_000, broker!.context.engine.leaderEpoch('lonely', 0)); // in the leader's epoch: refused for who sends it
    await Bun.sleep(20);
  }
  expect(await outcome).toMatch(/timed out|REQUEST_TIMED_OUT/i); // no follower applied it: acks=all must not answer success
  expect(highWatermark(broker!, 'lonely')).toBe(0);
  expect(answers).toEqual([]); // no high watermark handed out to a stranger
  for (const forger of forgers) forger.close();
  await producer.disconnect();
});
