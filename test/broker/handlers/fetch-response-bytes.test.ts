// Fetch response size is bounded by the broker, not only by the client (finding 17, adversarial
// review: memory a client controls). The handler took the client's max_bytes as it came, and
// treated 0 or less as "no limit" (as are v0-v2 requests, which have no max_bytes: 2^31-1), so one
// Fetch naming a large partition with partition_max_bytes 2^31-1 made the broker read the whole
// log into memory for a single response, and a client that then reads it slowly keeps it there.
// Kafka caps every fetch at the broker's fetch.max.bytes (55 MiB by default) and still returns
// the first batch whole if it alone is larger.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FetchRequest } from '../../../src/broker/apis/fetch.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleFetch } from '../../../src/broker/handlers/fetch.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { SingleBrokerTopology } from '../../../src/broker/topology.ts';
import { Engine } from '../../../src/engine/index.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { batchOf } from '../../support/batches.ts';
import { fetchRequest as fetchRequestOf } from '../../support/requests.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

setDefaultTimeout(120_000);

/** Kafka's fetch.max.bytes default (55 MiB). */
const KAFKA_FETCH_MAX_BYTES = 55 * 1024 * 1024;
const BATCH_VALUE_BYTES = 1000 * 1000;
/** A little more than Kafka's cap. */
const BATCHES = 64;
const INT32_MAX = 0x7fff_ffff;

const directory = mkdtempSync(join(tmpdir(), 'ferry-fetch-bytes-'));
let engine: Engine | null = null;
afterAll(async () => {
  await engine?.close();
  rmSync(directory, { recursive: true, force: true });
});

function fetchRequest(maxBytes: number, partitionMaxBytes: number): FetchRequest {
  return fetchRequestOf({
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    forgottenTopicsData: [],
    rackId: '',
    topics: [{ topic: 't', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes }] }],
  });
}

test("a client's max_bytes of 2^31-1, or 0, does not make the broker read past Kafka's fetch.max.bytes for one response", async () => {
  engine = await Engine.open({ directory, log: { flush: { kind: 'none' } } });
  await engine.createTopic('t', { partitions: 1 });
  for (let i = 0; i < BATCHES; i++) await (await engine.appendBatches('t', 0, batchOf(`b${i}`, 1, 1_700_000_000_000, BATCH_VALUE_BYTES))).committed;
  const context = {
    ...OPEN_SECURITY,
    nodeId: 1,
    advertisedHost: '127.0.0.1',
    advertisedPort: 9092,
    rack: null,
    clusterId: 'bytes',
    engine,
    clock: new ManualClock(),
    topology: new SingleBrokerTopology({ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }, engine),
    autoCreateTopics: false,
    defaultPartitions: 1,
  } as unknown as BrokerContext;

  for (const maxBytes of [INT32_MAX, 0, -1]) {
    const partition = (await handleFetch(context, fetchRequest(maxBytes, INT32_MAX))).responses[0]!.partitions[0]!;
    expect(partition.errorCode).toBe(ErrorCode.NONE);
    const bytes = (partition.records as readonly Uint8Array[]).reduce((sum, records) => sum + records.length, 0);
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(KAFKA_FETCH_MAX_BYTES);
  }
});
