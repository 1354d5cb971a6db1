import { expect, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { join } from 'node:path';
import { Broker } from 'ferry/broker';
import { FileStore } from 'ferry/store';
import { tempDir } from '../support/temp-dir.ts';

test('ferry/broker starts a Kafka broker in this process that a Kafka client produces to, and stops it', async () => {
  const root = tempDir();
  const store = await FileStore.open(join(root, 'objects'));
  const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: join(root, 'data'), wal: { store, writerId: 'broker-1' } } });
  const kafka = new Kafka({ clientId: 'ferry-package-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } });
  const producer = kafka.producer();
  try {
    await producer.connect();
    const [sent] = await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'one' }] });
    expect(sent?.baseOffset).toBe('0');
    // acks=all came back: the record is in the engine the broker serves, and shipped to the store.
    expect(broker.context.engine.fetch('orders', 0, 0).highWatermark).toBe(1);
    expect((await store.list('wal/broker-1/')).objects.length).toBeGreaterThan(0);
  } finally {
    await producer.disconnect();
    await broker.stop();
    await store.close();
  }
});
