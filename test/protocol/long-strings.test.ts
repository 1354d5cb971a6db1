// A Kafka STRING is at most 32767 bytes in every version (Kafka's generated writers refuse longer
// ones, its readers reject them): a response never carries a longer one, whatever a request
// echoed into an error message or grew a config to (found by the review of issue 12).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { decodeMessage } from '../../src/protocol/message-codec.ts';
import { createTopicsRequestSchema, createTopicsResponseSchema } from '../../src/protocol/messages/create-topics.ts';
import { describeConfigsRequestSchema } from '../../src/protocol/messages/describe-configs.ts';
import { incrementalAlterConfigsRequestSchema, incrementalAlterConfigsResponseSchema } from '../../src/protocol/messages/incremental-alter-configs.ts';
import { KafkaReader, STRING_BYTES_MAX } from '../../src/protocol/reader.ts';
import type { MessageSchema } from '../../src/protocol/schema.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { decodeBySchema, loadMessageSchema } from '../support/kafka-message-schema.ts';
import { type RawClient, rawClient, request } from '../support/raw-client.ts';

const TOPIC_RESOURCE = 2;
let directory: string;
let broker: Broker;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-long-strings-'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
});

afterAll(async () => {
  await broker.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** One request's answer body; the connection must stay and answer. */
async function call(client: RawClient, schema: MessageSchema, version: number, message: Record<string, unknown>, flexible: boolean): Promise<Uint8Array> {
  const body = await request(client, schema, version, message, flexible);
  expect(body).not.toBeNull();
  return body!;
}

test('CreateTopics v4 with the longest invalid config value: its error message, which echoes it, is cut to a STRING and the response reads whole', async () => {
  const client = await rawClient(broker.port);
  const value = 'x'.repeat(STRING_BYTES_MAX); // the longest legal request string
  const body = await call(
    client,
    createTopicsRequestSchema,
    4,
    { topics: [{ name: 'long-config', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value }] }], timeoutMs: 5000, validateOnly: false },
    false,
  );
  client.end();
  // Kafka's grammar reads the response back whole, and every string fits a STRING.
  const decoded = decodeBySchema(loadMessageSchema('CreateTopicsResponse'), 4, body) as { topics: { errorCode: number; errorMessage: string | null }[] };
  expect(decoded.topics[0]!.errorCode).toBe(40); // INVALID_CONFIG
  expect(new TextEncoder().encode(decoded.topics[0]!.errorMessage ?? '').length).toBeLessThanOrEqual(STRING_BYTES_MAX);
});

test('IncrementalAlterConfigs APPEND may not grow a LIST config past a STRING; DescribeConfigs of the topic stays a valid response', async () => {
  const client = await rawClient(broker.port);
  const created = await call(
    client,
    createTopicsRequestSchema,
    4,
    { topics: [{ name: 'throttled', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false },
    false,
  );
  expect((decodeMessage(createTopicsResponseSchema, new KafkaReader(created), 4).topics as { errorCode: number }[])[0]!.errorCode).toBe(0);
  const items = (from: number) => Array.from({ length: 2500 }, (_, i) => `${from + i}:1`).join(','); // ~16 KB per request
  for (let round = 0; round < 3; round++) {
    const answer = await call(
      client,
      incrementalAlterConfigsRequestSchema,
      1,
      {
        resources: [{ resourceType: TOPIC_RESOURCE, resourceName: 'throttled', configs: [{ name: 'leader.replication.throttled.replicas', configOperation: 2, value: items(round * 2500) }] }],
        validateOnly: false,
      },
      true,
    );
    const responses = decodeMessage(incrementalAlterConfigsResponseSchema, new KafkaReader(answer), 1).responses as { errorCode: number; errorMessage: string | null }[];
    // Either refused (Kafka would: its value could not be described) or accepted...
    if (responses[0]!.errorCode !== 0) break;
  }
  // ...but DescribeConfigs must stay a response a client can read.
  const described = await call(
    client,
    describeConfigsRequestSchema,
    1,
    { resources: [{ resourceType: TOPIC_RESOURCE, resourceName: 'throttled', configurationKeys: ['leader.replication.throttled.replicas'] }], includeSynonyms: false },
    false,
  );
  client.end();
  const decoded = decodeBySchema(loadMessageSchema('DescribeConfigsResponse'), 1, described) as { results: { errorCode: number; configs: { value: string | null }[] }[] };
  expect(decoded.results[0]!.errorCode).toBe(0);
  expect(new TextEncoder().encode(decoded.results[0]!.configs[0]!.value ?? '').length).toBeLessThanOrEqual(STRING_BYTES_MAX);
});
