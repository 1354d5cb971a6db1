// (From the review of issue 12.) Produce through the schema codec at v3 and v12 (flexible), to a
// LogAppendTime topic, with an idempotent producer: the retry of a batch answers its original
// offset and append time, the leader's rewritten CRC verifies when fetched back (Fetch v4 and
// v12), and what acks=all named is what is read. Restart included (durable at that offset).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { decodeMessage } from '../../src/protocol/message-codec.ts';
import { fetchRequestSchema, fetchResponseSchema } from '../../src/protocol/messages/fetch.ts';
import { initProducerIdRequestSchema, initProducerIdResponseSchema } from '../../src/protocol/messages/init-producer-id.ts';
import { produceRequestSchema, produceResponseSchema } from '../../src/protocol/messages/produce.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import type { MessageSchema } from '../../src/protocol/schema.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { splitBatches } from '../../src/format/batch-parse.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { type RawClient, rawClient, request } from '../support/raw-client.ts';

const PRODUCER_TIME = 1_000_000_000_000;
const store = new MemoryStore();
let directory: string;
let broker: Broker;

const start = () =>
  Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } } });

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-lat-wire-'));
  broker = await start();
});

afterAll(async () => {
  await broker.stop();
  rmSync(directory, { recursive: true, force: true });
});

// biome-ignore lint: decoded messages of any API
async function call(client: RawClient, schema: MessageSchema, responseSchema: MessageSchema, version: number, flexible: boolean, message: Record<string, unknown>): Promise<any> {
  const body = await request(client, schema, version, message, flexible);
  expect(body).not.toBeNull();
  return decodeMessage(responseSchema, new KafkaReader(body!), version);
}

for (const [produceVersion, fetchVersion] of [
  [3, 4],
  [12, 12],
] as const) {
  test(`Produce v${produceVersion}, idempotent, LogAppendTime: retry answers the original offset and time; Fetch v${fetchVersion} reads a batch whose CRC verifies, also after a restart`, async () => {
    const topic = `stamped-${produceVersion}`;
    await broker.context.topology.createTopic(topic, 1, 1, { 'message.timestamp.type': 'LogAppendTime' });
    let client = await rawClient(broker.port);
    const pid = await call(client, initProducerIdRequestSchema, initProducerIdResponseSchema, 4, true, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
    expect(pid.errorCode).toBe(0);
    const flexible = produceVersion >= 9;
    const produce = (sequence: number) =>
      call(client, produceRequestSchema, produceResponseSchema, produceVersion, flexible, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [
          {
            name: topic,
            partitionData: [
              {
                index: 0,
                records: buildRecordBatch(
                  [
                    { value: `v${sequence}`, timestamp: PRODUCER_TIME },
                    { value: `w${sequence}`, timestamp: PRODUCER_TIME },
                  ],
                  { nowMs: PRODUCER_TIME, compression: 'gzip', producerId: pid.producerId, producerEpoch: pid.producerEpoch, baseSequence: sequence * 2 },
                ),
              },
            ],
          },
        ],
      });
    const first = (await produce(0)).responses[0].partitionResponses[0];
    const second = (await produce(1)).responses[0].partitionResponses[0];
    expect([first.errorCode, second.errorCode]).toEqual([0, 0]);
    expect(first.logAppendTimeMs).toBeGreaterThan(PRODUCER_TIME);
    await Bun.sleep(5);
    const retry = (await produce(0)).responses[0].partitionResponses[0];
    expect({ errorCode: retry.errorCode, baseOffset: retry.baseOffset, logAppendTimeMs: retry.logAppendTimeMs }).toEqual({
      errorCode: 0,
      baseOffset: first.baseOffset,
      logAppendTimeMs: first.logAppendTimeMs,
    });
    client.end();

    await broker.stop();
    broker = await start();
    client = await rawClient(broker.port);
    const fetched = await call(client, fetchRequestSchema, fetchResponseSchema, fetchVersion, fetchVersion >= 12, {
      replicaId: -1,
      maxWaitMs: 100,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      topics: [{ topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1 }] }],
    });
    const partition = fetched.responses[0].partitions[0];
    expect(partition.errorCode).toBe(0);
    const batches = splitBatches(Uint8Array.from(partition.records), 1 << 20);
    expect(batches.map((b) => [b.baseOffset, b.isCrcValid(), b.timestampType, b.maxTimestamp, b.compression])).toEqual([
      [first.baseOffset, true, 'LogAppendTime', first.logAppendTimeMs, 'gzip'],
      [second.baseOffset, true, 'LogAppendTime', second.logAppendTimeMs, 'gzip'],
    ]);
    // The retry after the restart still answers the original (the producer state came back).
    const again = (
      await call(client, produceRequestSchema, produceResponseSchema, produceVersion, flexible, {
        transactionalId: null,
        acks: -1,
        timeoutMs: 5000,
        topicData: [
          {
            name: topic,
            partitionData: [
              {
                index: 0,
                records: buildRecordBatch(
                  [
                    { value: 'w1', timestamp: PRODUCER_TIME },
                    { value: 'w1', timestamp: PRODUCER_TIME },
                  ],
                  { nowMs: PRODUCER_TIME, compression: 'gzip', producerId: pid.producerId, producerEpoch: pid.producerEpoch, baseSequence: 2 },
                ),
              },
            ],
          },
        ],
      })
    ).responses[0].partitionResponses[0];
    expect({ baseOffset: again.baseOffset, logAppendTimeMs: again.logAppendTimeMs }).toEqual({ baseOffset: second.baseOffset, logAppendTimeMs: second.logAppendTimeMs });
    client.end();
  });
}
