// Review of issue 9 finding 13: progress counts only from a registered, live replica broker whose
// connection comes from its registered host. Every broker of a test cluster (and of any cluster
// whose brokers share a host, or reach each other through NAT or a proxy) registers 127.0.0.1, so
// the address check passes for any process on that host: a client that names the follower's
// replica id forges the min.insync.replicas acknowledgement. This stays red until brokers
// authenticate each other (the security issue); it is here so that the gap is not mistaken for a guarantee.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/cluster/control-store.ts';
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

// Open until brokers authenticate each other (the security issue): the registered-address check
// cannot tell two processes on one host apart. Kept as a todo; `bun test --todo` runs it.
test.todo('a replica Fetch forged from 127.0.0.1 in the name of a registered follower on 127.0.0.1 does not acknowledge acks=all (needs broker authentication)', async () => {
  const store = new MemoryStore();
  // Broker 2 is registered (live lease, host 127.0.0.1) but never applies anything: it is the partition's follower.
  await new ControlStore(store, '').put('brokers/2', { nodeId: 2, host: '127.0.0.1', port: 1, rack: null, stream: { writerId: 'broker-2', epoch: 0 }, leaseMs: 60_000, renewedAtMs: Date.now() });
  const broker = await Broker.start({
    listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, minInsyncReplicas: 2,
    cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  brokers.push(broker);
  const kafka = new Kafka({ clientId: 'forger', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'forged', numPartitions: 1, replicationFactor: 2 }] });
  await admin.disconnect();
  await until(() => broker.context.engine.leads('forged', 0), 'broker 1 to lead the partition');
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  const outcome = producer.send({ topic: 'forged', acks: -1, timeout: 3000, messages: [{ value: 'nobody else has this' }] }).then(() => 'acknowledged', (error: unknown) => String(error));
  const forger = new ProgressReporter(2, '127.0.0.1', broker.port, { clock: systemClock, highWatermark: () => {} });
  for (let round = 0; round < 20; round++) {
    const served = broker.context.engine.serves('forged', 0);
    forger.report('forged', 0, served ? broker.context.engine.logEndOffset('forged', 0) : 0, served ? broker.context.engine.leaderEpoch('forged', 0) : 0); // exactly the leader's log end, in its epoch
    await Bun.sleep(20);
  }
  expect(await outcome).toMatch(/timed out|REQUEST_TIMED_OUT/i);
  forger.close();
  await producer.disconnect();
});
