// The controller is a live broker (issue 24): with the broker Metadata names as controller
// SIGSTOPped, librdkafka's CreateTopics and DeleteTopics timed out for 60 s and more, until it was
// resumed. Now Metadata names as controller only a broker whose lease holds, and a broker that is
// not the controller (by the rule every broker applies to the same records) answers the
// controller's requests NOT_CONTROLLER, so a client reads Metadata again and goes to a live one.
// Three real broker processes on one file store, and kafkajs's admin client.
import { afterEach, expect, test } from 'bun:test';
import { join } from 'node:path';
import { type Admin, Kafka, logLevel } from 'kafkajs';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const LEASE_MS = 3_000;
const SCAN_INTERVAL_MS = 200;
/**
 * The client's wait for one answer: a request sent to the paused broker before its lease lapsed
 * waits this long. Above the lease, since a delete waits out the lease of a partition's other
 * leader ([L8], src/cluster/topic-catalog.ts) before it answers.
 */
const REQUEST_TIMEOUT_MS = LEASE_MS + 2_000;
/**
 * What a create or a delete may take past the lease: one request of REQUEST_TIMEOUT_MS sent to the
 * paused broker before its lease lapsed, the scan that finds it lapsed, the client's backoff.
 * Loose on purpose (the machines are shared): the bug took 60 s and more.
 */
const SLACK_MS = REQUEST_TIMEOUT_MS + 4_000;
/** Enough retries to ride through the lease at the backoff below. */
const CLIENT_RETRY = { retries: 30, initialRetryTime: 100, maxRetryTime: 500 };

const brokers: BrokerProcess[] = [];
const admins: Admin[] = [];
afterEach(async () => {
  for (const admin of admins.splice(0)) await admin.disconnect().catch(() => {});
  await killAll(brokers.splice(0)); // SIGCONT first: a paused broker dies of SIGKILL only once it runs
});

async function startCluster(): Promise<BrokerProcess[]> {
  const root = tempDir();
  const store = `file:${join(root, 'objects')}`;
  const args = ['--wal-store', store, '--cluster-store', store, '--create-store', '--lease-ms', String(LEASE_MS), '--scan-interval-ms', String(SCAN_INTERVAL_MS)];
  for (const nodeId of [1, 2, 3]) {
    let broker: BrokerProcess;
    do broker = new BrokerProcess({ nodeId, data: join(root, `broker-${nodeId}`), args });
    while (brokers.some((other) => other.port === broker.port)); // free ports are picked one by one and may repeat
    brokers.push(broker);
  }
  await Promise.all(brokers.map((broker) => broker.start()));
  return brokers;
}

async function connectedAdmin(to: readonly BrokerProcess[]): Promise<Admin> {
  const kafka = new Kafka({ clientId: 'paused-controller', brokers: to.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, requestTimeout: REQUEST_TIMEOUT_MS, retry: CLIENT_RETRY });
  const admin = kafka.admin();
  admins.push(admin);
  await admin.connect();
  return admin;
}

/** Asks each broker in turn which broker is the controller (DescribeCluster, as Metadata answers it). */
async function controllersNamed(by: readonly BrokerProcess[]): Promise<number[]> {
  const named: number[] = [];
  for (const broker of by) {
    const admin = await connectedAdmin([broker]);
    named.push((await admin.describeCluster()).controller!);
    await admin.disconnect();
  }
  return named;
}

/**
 * Runs `action` through a fresh client on the live brokers until it succeeds, as an application
 * retries an admin call that timed out: each attempt reads Metadata again. Returns the ms taken.
 */
async function retriedUntil(deadlineMs: number, live: readonly BrokerProcess[], action: (admin: Admin) => Promise<unknown>): Promise<number> {
  const startedMs = performance.now();
  for (;;) {
    const admin = await connectedAdmin(live);
    try {
      await action(admin);
      return performance.now() - startedMs;
    } catch (error) {
      // kafkajs gives up on a request that timed out (it retries NOT_CONTROLLER itself).
      if ((error as Error).name !== 'KafkaJSRequestTimeoutError' || performance.now() > deadlineMs) throw error;
    } finally {
      await admin.disconnect().catch(() => {});
    }
  }
}

test('with the controller paused, CreateTopics and DeleteTopics succeed within the lease and a few seconds', async () => {
  const cluster = await startCluster();
  const admin = await connectedAdmin(cluster);
  let described = await admin.describeCluster();
  while (described.brokers.length < cluster.length) described = await admin.describeCluster(); // every broker seen by the one asked
  // Until every broker's scan has seen every lease, one may name a controller that answers NOT_CONTROLLER, which
  // kafkajs's CreateTopics does not retry (it bails on the topic error): wait until all name the same one.
  while (new Set(await controllersNamed(cluster)).size !== 1) await Bun.sleep(SCAN_INTERVAL_MS);
  described = await admin.describeCluster();
  // Setup, not what is judged: a scan between the check above and the create can still move the
  // controller (a full suite run met NOT_CONTROLLER here), which kafkajs does not retry.
  for (;;) {
    try {
      await admin.createTopics({ topics: [{ topic: 'before-pause', numPartitions: 3 }] });
      break;
    } catch (error) {
      if (!String((error as { errors?: unknown[] }).errors?.[0] ?? error).includes('controller')) throw error;
      await Bun.sleep(SCAN_INTERVAL_MS);
      described = await admin.describeCluster();
    }
  }
  const controller = cluster.find((broker) => broker.options.nodeId === described.controller)!;
  const live = cluster.filter((broker) => broker !== controller);

  controller.pause();
  const createMs = await retriedUntil(performance.now() + LEASE_MS + SLACK_MS, live, (a) => a.createTopics({ topics: [{ topic: 'during-pause', numPartitions: 2 }] }));
  const deleteMs = await retriedUntil(performance.now() + LEASE_MS + SLACK_MS, live, (a) => a.deleteTopics({ topics: ['before-pause'] }));
  const named = await controllersNamed(live);
  const topics = await (await connectedAdmin(live)).listTopics();
  controller.resume();

  expect({ created: createMs <= LEASE_MS + SLACK_MS, deleted: deleteMs <= LEASE_MS + SLACK_MS, topics: topics.sort() }).toEqual({ created: true, deleted: true, topics: ['during-pause'] });
  // One controller, a live one, named by every live broker.
  expect(named.map((id) => id !== controller.options.nodeId && id === named[0])).toEqual(live.map(() => true));
});
