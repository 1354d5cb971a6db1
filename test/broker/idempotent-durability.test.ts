// Issue 9, finding 1: with the WAL writer fenced, an idempotent producer's retry must not be
// acknowledged unless it became durable (at 61acc49 the first attempt got NOT_LEADER_OR_FOLLOWER
// and its retry NONE at offset 0 while the only object in the stream was the seal). A lone broker is
// a cluster of one (issue 24): fenced, it starts a new writer epoch and claims its partitions again
// [C7], so a retry may then be acknowledged, but only through the new stream, and once.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { listEpochs, listSequences, sealStream } from '../../src/wal/seal.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

test('a fenced leader acknowledges no retry of a batch it could not make durable', async () => {
  const store = new MemoryStore();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  try {
    const stream = broker.context.engine.wal!.config.stream;
    await sealStream(store, '', stream, { writerId: 'successor', nowMs: Date.now() }); // a successor took over
    const kafka = new Kafka({ clientId: 'fenced', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'f', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry: { retries: 3, initialRetryTime: 20, maxRetryTime: 100 } });
    await producer.connect();
    const outcome = await producer.send({ topic: 'f', acks: -1, messages: [{ value: 'never durable' }] }).then(
      () => 'acknowledged',
      (error: Error) => error.name,
    );
    await producer.disconnect();
    expect([...(await listSequences(store, '', stream))]).toEqual([0]); // the seal, and nothing of ours
    if (outcome === 'acknowledged') {
      // Acknowledged only as durable in a later epoch's stream, and held once.
      const later = (await listEpochs(store, '', stream.writerId)).filter((epoch) => epoch > stream.epoch);
      const objects = await Promise.all(later.map(async (epoch) => [...(await listSequences(store, '', { writerId: stream.writerId, epoch }))].length));
      expect(objects.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
      const held = broker.context.engine.fetch('f', 0, 0);
      expect([held.highWatermark, held.batches.length]).toEqual([1, 1]); // the one record, once
    }
  } finally {
    await broker.stop();
  }
});
