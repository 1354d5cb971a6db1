// A broker short of file descriptors (finding 18): operating-system errors are answered per
// request as KAFKA_STORAGE_ERROR, never crash the broker, and it still stops cleanly on SIGTERM.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);

/** Room for the runtime and a few topics: a partition holds three files (log, offset and time index). */
const FD_LIMIT = 64;
const TOPICS = 40;
/** Longer than the engine's shipped-offsets checkpoint interval (1 s): its timer runs while descriptors are short. */
const STARVED_MS = 2500;
/** Reconnections a send may take when an accept met EMFILE (the check is on the error a request gets, not on accepting). */
const PRODUCER_RETRIES = 6;

const brokers: BrokerProcess[] = [];
afterAll(() => killAll(brokers));

/** The Kafka error types a kafkajs failure carries (one per topic for CreateTopics, the last retry's otherwise). */
function errorTypes(error: unknown): string[] {
  const found = error as { type?: string; errors?: unknown[]; originalError?: unknown; cause?: unknown };
  if (Array.isArray(found.errors)) return found.errors.flatMap(errorTypes);
  if (found.originalError !== undefined) return errorTypes(found.originalError);
  if (found.cause !== undefined) return errorTypes(found.cause);
  return found.type === undefined ? [String(error)] : [found.type];
}

/**
 * Metadata answers LEADER_NOT_AVAILABLE for a topic whose control record cannot be read for want
 * of a descriptor (the control records live in the data directory here, and the logs that did open
 * may hold every descriptor left): asked again, and at worst the topics are unknown to the test.
 */
async function listTopicsRetrying(admin: ReturnType<Kafka['admin']>): Promise<string[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.listTopics();
    } catch (error) {
      if (!errorTypes(error).includes('LEADER_NOT_AVAILABLE')) throw error;
      if (attempt >= LIST_ATTEMPTS) return [];
      await Bun.sleep(LIST_RETRY_MS);
    }
  }
}
const LIST_ATTEMPTS = 5;
const LIST_RETRY_MS = 200;

test('out of file descriptors: requests fail with KAFKA_STORAGE_ERROR, the broker lives on and exits 0 on SIGTERM', async () => {
  const broker = new BrokerProcess({ nodeId: 1, data: tempDir(), fdLimit: FD_LIMIT, args: ['--no-auto-create'] });
  brokers.push(broker);
  await broker.start();
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 1, initialRetryTime: 50 } });
  const admin = kafka.admin();
  await admin.connect();
  const created = await admin.createTopics({ topics: Array.from({ length: TOPICS }, (_, i) => ({ topic: `t${i}`, numPartitions: 2 })) }).then(() => [], errorTypes);
  expect(created.length).toBeGreaterThan(0); // the limit is low enough that some topics cannot open
  // A topic's record lives in the control store (in the data directory here): a write that failed
  // there may or may not have landed, which Kafka answers REQUEST_TIMED_OUT.
  expect(created.filter((type) => type !== 'KAFKA_STORAGE_ERROR' && type !== 'REQUEST_TIMED_OUT')).toEqual([]);
  const topics = await listTopicsRetrying(admin);
  const existing = topics.length;
  const storageFailures = created.filter((type) => type === 'KAFKA_STORAGE_ERROR').length;
  expect(existing).toBeLessThanOrEqual(TOPICS - storageFailures); // a topic refused for its storage is not left half-created

  // Background work (tiering, WAL GC, checkpoints) takes the last descriptors for moments, when a
  // new connection cannot be accepted (EMFILE on accept, as any server): the producer reconnects.
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: PRODUCER_RETRIES, initialRetryTime: 100 } });
  await producer.connect();
  const failures: string[] = [];
  for (const topic of topics) await producer.send({ topic, messages: [{ value: 'x' }] }).catch((error: unknown) => failures.push(...errorTypes(error)));
  // Where the control records cannot be read for want of a descriptor, a partition has no leader for a while (retriable).
  expect(failures.filter((type) => !['KAFKA_STORAGE_ERROR', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_OR_FOLLOWER'].includes(type))).toEqual([]);
  await Bun.sleep(STARVED_MS);
  expect(broker.running).toBe(true);
  await producer.disconnect();
  await admin.disconnect();

  expect(await broker.terminate()).toBe(0);
  expect(broker.output()).not.toMatch(/^\s+at /m); // no stack trace
});
