// Client quotas over the wire, on a broker started in this process whose listener routes through
// the quota wrapper as the broker's own will (src/broker/quota-enforcement.ts): @platformatic/kafka's
// admin sets and describes quotas (kafka-configs.sh's AlterClientQuotas and DescribeClientQuotas),
// then a produce-heavy raw client is throttled: throttle_time_ms in its answer, its connection muted.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Admin, ClientQuotaEntityTypes, ClientQuotaKeys, ClientQuotaMatchTypes } from '@platformatic/kafka';
import { Broker } from '../../../src/broker/broker.ts';
import { apiBindings } from '../../../src/broker/bindings.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { decodeMessage } from '../../../src/protocol/message-codec.ts';
import { fetchRequestSchema, fetchResponseSchema } from '../../../src/protocol/messages/fetch.ts';
import { metadataRequestSchema, metadataResponseSchema } from '../../../src/protocol/messages/metadata.ts';
import { produceRequestSchema, produceResponseSchema } from '../../../src/protocol/messages/produce.ts';
import { KafkaReader } from '../../../src/protocol/reader.ts';
import type { MessageSchema } from '../../../src/protocol/schema.ts';
import { enforceClientQuotas } from '../../../src/broker/quota-enforcement.ts';
import { Router } from '../../../src/broker/router.ts';
import { KafkaServer } from '../../../src/broker/server.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { buildRecordBatch } from '../../../src/format/batch-builder.ts';
import { MetricsRegistry } from '../../../src/metrics/index.ts';
import { ClientQuotaStore } from '../../../src/security/quotas/store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { systemClock } from '../../../src/util/clock.ts';
import { type RawClient, rawClient, request } from '../../support/raw-client.ts';

setDefaultTimeout(30_000);

/** The client id test/support/raw-client.ts sends. */
const RAW_CLIENT_ID = 'raw-client';
const TOPIC = 'quota-heavy';
/** One batch of this many bytes of values, not compressed. */
const VALUE_BYTES = 110_000;
/** producer_byte_rate of the raw client: its batch at once reads ~11000/s over the first 10 s windows. */
const PRODUCER_BYTE_RATE = 10_000;

let directory: string;
let broker: Broker;
let server: KafkaServer;
let quotas: ClientQuotaStore;
let metrics: MetricsRegistry;
let admin: Admin;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-quotas-wire-'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  await broker.context.topology.createTopic(TOPIC, 1, 1, {});
  quotas = new ClientQuotaStore(new ControlStore(new MemoryStore(), ''));
  // The security the broker will hold once BrokerSecurity keeps the quota store (no authorizer here).
  const security = { authorizer: null, acls: null, scram: broker.context.security.scram, interBrokerListener: null, quotas };
  const context: BrokerContext = { ...broker.context, security };
  metrics = new MetricsRegistry();
  const router = new Router(
    enforceClientQuotas(
      apiBindings(() => context),
      { quotas, clock: systemClock, metrics },
    ),
  );
  server = KafkaServer.listen({ hostname: '127.0.0.1', port: 0, router, log: () => {} });
  admin = new Admin({ clientId: 'ferry-quotas-admin', bootstrapBrokers: [`127.0.0.1:${server.port}`], retries: 0, timeout: 10_000 });
});

afterAll(async () => {
  await admin?.close().catch(() => {});
  server?.stop();
  await broker?.stop();
  rmSync(directory, { recursive: true, force: true });
});

// biome-ignore lint: decoded messages of any API
async function call(client: RawClient, schema: MessageSchema, responseSchema: MessageSchema, version: number, flexible: boolean, message: Record<string, unknown>): Promise<any> {
  const body = await request(client, schema, version, message, flexible);
  expect(body).not.toBeNull();
  return decodeMessage(responseSchema, new KafkaReader(body!), version);
}

/** The error's text with the Kafka errors platformatic nests in it. */
function errorText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const nested = (error as { errors?: unknown }).errors;
  const response = (error as { response?: unknown }).response;
  return [error.message, ...(Array.isArray(nested) ? nested.map(errorText) : []), response === undefined ? '' : JSON.stringify(response)].join(' | ');
}

test("platformatic's admin sets quotas (its per-entry errors included) and describes them", async () => {
  const rawClient = [{ entityType: ClientQuotaEntityTypes.CLIENT_ID, entityName: RAW_CLIENT_ID }];
  expect(await admin.alterClientQuotas({ entries: [{ entities: rawClient, ops: [{ key: ClientQuotaKeys.PRODUCER_BYTE_RATE, value: PRODUCER_BYTE_RATE, remove: false }] }] })).toEqual([
    { errorCode: 0, errorMessage: null, entity: [{ entityType: 'client-id', entityName: RAW_CLIENT_ID }] },
  ]);
  await admin.alterClientQuotas({
    entries: [{ entities: [{ entityType: ClientQuotaEntityTypes.USER, entityName: null }], ops: [{ key: ClientQuotaKeys.REQUEST_PERCENTAGE, value: 200, remove: false }] }],
  });
  const refused = await admin
    .alterClientQuotas({ entries: [{ entities: [{ entityType: ClientQuotaEntityTypes.USER, entityName: 'alice' }], ops: [{ key: ClientQuotaKeys.CONSUMER_BYTE_RATE, value: 1.5, remove: false }] }] })
    .then(() => null, errorText);
  expect(refused).toContain('consumer_byte_rate cannot be a fractional value.');
  const exact = await admin.describeClientQuotas({ components: [{ entityType: ClientQuotaEntityTypes.CLIENT_ID, matchType: ClientQuotaMatchTypes.EXACT, match: RAW_CLIENT_ID }], strict: true });
  expect(exact).toEqual([{ entity: [{ entityType: 'client-id', entityName: RAW_CLIENT_ID }], values: [{ key: 'producer_byte_rate', value: PRODUCER_BYTE_RATE }] }]);
  const users = await admin.describeClientQuotas({ components: [{ entityType: ClientQuotaEntityTypes.USER, matchType: ClientQuotaMatchTypes.ANY }] });
  expect(users).toEqual([{ entity: [{ entityType: 'user', entityName: null }], values: [{ key: 'request_percentage', value: 200 }] }]);
  const badFilter = await admin
    .describeClientQuotas({
      components: [
        { entityType: ClientQuotaEntityTypes.IP, matchType: ClientQuotaMatchTypes.ANY },
        { entityType: ClientQuotaEntityTypes.USER, matchType: ClientQuotaMatchTypes.DEFAULT },
      ],
    })
    .then(() => null, errorText);
  expect(badFilter).toContain('IP filter component should not be used with user or clientId filter component.');
});

test('a produce-heavy client: its answer carries the throttle time, and its next request waits that long', async () => {
  const batch = buildRecordBatch([{ value: crypto.getRandomValues(new Uint8Array(VALUE_BYTES)) }], { nowMs: Date.now() });
  // A fresh rate divides by 10 windows of 1 s: (bytes / 10 - quota) / quota × 10000 ms.
  const expectedMs = Math.round(((batch.length / 10 - PRODUCER_BYTE_RATE) / PRODUCER_BYTE_RATE) * 10_000);
  expect(expectedMs).toBeGreaterThan(500);
  const client = await rawClient(server.port);
  try {
    const produced = await call(client, produceRequestSchema, produceResponseSchema, 9, true, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: batch }] }],
    });
    expect(produced.responses[0].partitionResponses[0].errorCode).toBe(0);
    expect(produced.throttleTimeMs).toBe(expectedMs);
    const sentMs = performance.now();
    const metadata = await call(client, metadataRequestSchema, metadataResponseSchema, 4, false, { topics: [], allowAutoTopicCreation: false });
    const waitedMs = performance.now() - sentMs;
    expect(metadata.brokers.length).toBe(1);
    expect(metadata.throttleTimeMs).toBe(0); // its own quota (200% of a thread) is not exceeded
    expect(waitedMs).toBeGreaterThan(expectedMs - 150);
  } finally {
    client.end();
  }
  expect(metrics.renderPrometheus()).toContain('ferry_broker_throttled_requests_total{quota="produce"} 1');
  // Another connection of the same client id shares the rate: still past its quota.
  const again = await rawClient(server.port);
  try {
    const produced = await call(again, produceRequestSchema, produceResponseSchema, 9, true, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 5000,
      topicData: [{ name: TOPIC, partitionData: [{ index: 0, records: buildRecordBatch([{ value: 'small' }], { nowMs: Date.now() }) }] }],
    });
    expect(produced.throttleTimeMs).toBeGreaterThan(0);
  } finally {
    again.end();
  }
});

test('a consumer past consumer_byte_rate gets an answer without records and its throttle time', async () => {
  await quotas.alter([{ entity: [{ entityType: 'user', entityName: 'ANONYMOUS' }], ops: [{ key: 'consumer_byte_rate', value: 5_000, remove: false }] }], false);
  const client = await rawClient(server.port);
  try {
    const fetched = await call(client, fetchRequestSchema, fetchResponseSchema, 12, true, {
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      topics: [{ topic: TOPIC, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1 }] }],
    });
    expect(fetched.errorCode).toBe(0);
    expect(fetched.responses).toEqual([]);
    expect(fetched.throttleTimeMs).toBeGreaterThan(10_000); // more than 110 KB against 5000/s over 10 s
  } finally {
    client.end();
  }
  expect(metrics.renderPrometheus()).toContain('ferry_broker_throttled_requests_total{quota="fetch"} 1');
});
