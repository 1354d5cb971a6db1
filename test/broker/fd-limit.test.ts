// A broker short of file descriptors (finding 18): operating-system errors are answered per
// request with Kafka's retriable errors, never crash the broker, and it still stops cleanly on
// SIGTERM. Topics are created one at a time: each open partition holds descriptors, so the first
// ones are served and the later ones are refused (their control records or their logs cannot be
// opened), and the broker then runs at its limit.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { withDeadline } from '../support/deadline.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(180_000);

/** Room for the runtime and a few topics: a partition holds three files (log, offset and time index). */
const FD_LIMIT = 64;
const TOPICS = 16;
/** Longer than the engine's shipped-offsets checkpoint interval (1 s): its timer runs while descriptors are short. */
const STARVED_MS = 2500;
/** Reconnections a send may take when an accept met EMFILE (the check is on the error a request gets, not on accepting). */
const PRODUCER_RETRIES = 6;
/**
 * kafkajs waits 30 s for an answer by default. A connection made while the broker has no
 * descriptor waits in the listen backlog until an accept succeeds: a short wait lets the client
 * give up and connect again, as a client with a small request.timeout.ms does.
 */
const REQUEST_TIMEOUT_MS = 5000;
/** A bound on each step, so a wedged step fails naming itself (with the broker's last words) rather than the whole test's timeout. */
const STEP_MS = 45_000;
/**
 * The stop's bound: a broker still short of descriptors may wait out the engine's 30 s for WAL
 * uploads (CLOSE_WAL_FLUSH_WAIT_MS, src/engine/wal-writer-lifecycle.ts) before it closes its logs.
 * A stop that never ends (a file store lock stripe wedged by EMFILE did that) still fails here.
 */
const STOP_MS = 75_000;
/**
 * What a request may meet at the limit, all retriable in Kafka: the log or the WAL object could
 * not be written (KAFKA_STORAGE_ERROR), the partition's control record or log could not be read or
 * its lease renewed (LEADER_NOT_AVAILABLE; NOT_LEADER_OR_FOLLOWER, which kafkajs calls
 * NOT_LEADER_FOR_PARTITION; UNKNOWN_TOPIC_OR_PARTITION), a control record
 * write failed and may have landed (REQUEST_TIMED_OUT); and, in kafkajs's words, a topic created
 * whose partitions found no leader in the admin's wait (it asks Metadata until they do).
 */
const RETRIABLE_AT_THE_LIMIT = [
  'KAFKA_STORAGE_ERROR',
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'REQUEST_TIMED_OUT',
  'KafkaJSTimeout: Timed out while waiting for topic leaders',
];

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

test('out of file descriptors: requests fail with retriable errors, the broker lives on and exits 0 on SIGTERM', async () => {
  const broker = new BrokerProcess({ nodeId: 1, data: tempDir(), fdLimit: FD_LIMIT, args: ['--no-auto-create'] });
  brokers.push(broker);
  const step = <T>(promise: Promise<T>, what: string, timeoutMs = STEP_MS) =>
    withDeadline(promise, timeoutMs, what, () => `; the broker's last lines:\n${broker.output().split('\n').slice(-20).join('\n')}`);
  await broker.start();
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, requestTimeout: REQUEST_TIMEOUT_MS, retry: { retries: 1, initialRetryTime: 50 } });
  const admin = kafka.admin();
  await step(admin.connect(), 'the admin connect');

  // The clients connect while descriptors are plenty: at the limit a new connection waits in the
  // listen backlog until an accept finds a descriptor (test/broker/accept-emfile-spin.test.ts), and
  // what is checked here is what requests get, not accepting. The producer's first send opens its
  // connection to the leader, kept for the sends that follow.
  const producer = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: PRODUCER_RETRIES, initialRetryTime: 100 } });
  await step(producer.connect(), 'the producer connect');
  await step(admin.createTopics({ topics: [{ topic: 't0', numPartitions: 2 }] }), 'creating t0');
  await step(producer.send({ topic: 't0', messages: [{ value: 'before the limit' }] }), 'the first send');

  const created: string[] = ['t0'];
  const refused: string[] = [];
  for (let i = 1; i < TOPICS; i++) {
    const topic = `t${i}`;
    const outcome = await step(
      admin.createTopics({ topics: [{ topic, numPartitions: 2 }] }).then(() => null, errorTypes),
      `creating ${topic}`,
    );
    if (outcome === null) created.push(topic);
    else refused.push(...outcome);
  }
  console.log(`fd-limit: ${created.length} topics created, ${refused.length} refusals`);
  expect(refused.length).toBeGreaterThan(0); // the limit is low enough that later topics cannot open
  expect(refused.filter((type) => !RETRIABLE_AT_THE_LIMIT.includes(type))).toEqual([]);

  const failures: string[] = [];
  for (const topic of created) {
    const sent = producer.send({ topic, messages: [{ value: 'x' }] }).then(
      () => undefined,
      (error: unknown) => void failures.push(...errorTypes(error)),
    );
    await step(sent, `a send to ${topic}`);
  }
  expect(failures.filter((type) => !RETRIABLE_AT_THE_LIMIT.includes(type))).toEqual([]);
  await Bun.sleep(STARVED_MS);
  expect(broker.running).toBe(true);
  await step(producer.disconnect(), 'the producer disconnect');
  await step(admin.disconnect(), 'the admin disconnect');

  expect(await step(broker.terminate(), 'the broker stopping on SIGTERM', STOP_MS)).toBe(0);
  expect(broker.output()).not.toMatch(/^\s+at /m); // no stack trace
});
