// [R6] DeleteRecords answers only once every in-sync follower took the new log start up (Kafka's
// DelayedDeleteRecords): the follower learns it from the answers to its progress reports, with no
// scan of the partition record (its scans are an hour apart here); a follower the leader cannot
// hear from makes the request answer REQUEST_TIMED_OUT within its timeout, and once heard from
// again it takes the start up all the same.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { handleDeleteRecords } from '../../src/broker/handlers/partition-admin.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import type { Network } from '../../src/util/network.ts';
import { CuttableNetwork } from '../support/cuttable-network.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);
/** The leader scans often (it must see the follower's broker record to count its reports). */
const LEADER_SCAN_INTERVAL_MS = 50;
/** The follower scans once, at its start: it follows the partition, and never reads its record again. */
const FOLLOWER_SCAN_INTERVAL_MS = 3_600_000;
const LEASE_MS = 5000;
const RECORDS = 10;
const DELETE_BEFORE = 5;
/** The DeleteRecords request's timeout when the follower is cut off. */
const CUT_OFF_TIMEOUT_MS = 1000;
/** What a timed-out answer may take past its timeout (a loaded machine). */
const ANSWER_SLACK_MS = 1500;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function start(store: ObjectStore, nodeId: number, scanIntervalMs: number, network?: Network): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    ...(network === undefined ? {} : { network }),
    cluster: { store, leaseMs: LEASE_MS, scanIntervalMs },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  return broker;
}

/** Broker 1 leads t-0 (replication factor 2) and broker 2, started after, follows it holding RECORDS records. */
async function leaderAndFollower(followerNetwork?: Network): Promise<{ leader: Broker; follower: Broker }> {
  const store = new MemoryStore();
  const leader = await start(store, 1, LEADER_SCAN_INTERVAL_MS);
  await leader.context.topology.createTopic('t', 1, 2);
  await until(() => leader.context.engine.leads('t', 0), 'broker 1 leading t-0', 30_000);
  const follower = await start(store, 2, FOLLOWER_SCAN_INTERVAL_MS, followerNetwork);
  await until(() => follower.context.engine.serves('t', 0) && leader.context.engine.inSyncReplicaEnd('t', 0, 'broker-2') !== null, 'broker 2 following t-0 in sync', 30_000);
  for (let i = 0; i < RECORDS; i++) await leader.context.engine.produce('t', [{ value: `record ${i}` }], { partition: 0, acks: 'all' });
  await until(() => follower.context.engine.logEndOffset('t', 0) === RECORDS && leader.context.engine.inSyncReplicaEnd('t', 0, 'broker-2') === RECORDS, 'the follower holding the records', 30_000);
  return { leader, follower };
}

/** The offsets below DELETE_BEFORE the broker still serves from 0. */
async function servedBelowStart(broker: Broker): Promise<number[]> {
  try {
    return (await broker.context.engine.fetchWithTier('t', 0, 0)).batches.map((batch) => batch.baseOffset).filter((offset) => offset < DELETE_BEFORE);
  } catch (error) {
    if (isFerryError(error, 'OffsetOutOfRange')) return [];
    throw error;
  }
}

function deleteRecordsRequest(leader: Broker, timeoutMs: number) {
  return handleDeleteRecords(leader.context, { topics: [{ name: 't', partitions: [{ partitionIndex: 0, offset: DELETE_BEFORE }] }], timeoutMs });
}

test('the follower takes the new log start up from the answers to its reports, with no scan, before DeleteRecords answers', async () => {
  const { leader, follower } = await leaderAndFollower();
  expect(await servedBelowStart(follower)).toEqual([0, 1, 2, 3, 4]);
  // The follower is idle (its reports all answered) and scans no more: only its repeated reports
  // bring it the leader's new start.
  expect(await leader.context.topology.deleteRecords('t', 0, DELETE_BEFORE, 10_000)).toBe(DELETE_BEFORE);
  expect(follower.context.engine.logStartOffset('t', 0)).toBe(DELETE_BEFORE);
  expect(await servedBelowStart(follower)).toEqual([]);
});

test('a follower the leader cannot hear from makes DeleteRecords answer REQUEST_TIMED_OUT within its timeout; heard again, it takes the start up', async () => {
  const network = new CuttableNetwork();
  const { leader, follower } = await leaderAndFollower(network);
  network.cut(leader.port); // its lease stays live (the store): the leader still counts it in sync
  const startedMs = performance.now();
  const timedOut = await deleteRecordsRequest(leader, CUT_OFF_TIMEOUT_MS);
  const tookMs = performance.now() - startedMs;
  expect(timedOut.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
  expect(tookMs).toBeGreaterThanOrEqual(CUT_OFF_TIMEOUT_MS - 1);
  expect(tookMs).toBeLessThan(CUT_OFF_TIMEOUT_MS + ANSWER_SLACK_MS);
  expect(leader.context.engine.logStartOffset('t', 0)).toBe(DELETE_BEFORE); // the delete stands on the leader
  expect(await servedBelowStart(leader)).toEqual([]);

  network.heal();
  await until(() => follower.context.engine.logStartOffset('t', 0) === DELETE_BEFORE, 'the follower taking the start up once its reports reach the leader', 10_000);
  expect(await servedBelowStart(follower)).toEqual([]);
  const retried = await deleteRecordsRequest(leader, CUT_OFF_TIMEOUT_MS);
  expect(retried.topics[0]!.partitions[0]).toEqual({ partitionIndex: 0, lowWatermark: DELETE_BEFORE, errorCode: ErrorCode.NONE });
});
