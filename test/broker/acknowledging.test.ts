// Broker.acknowledging tells whether a cluster broker acknowledges writes now: not while its lease
// may have lapsed, nor after a renewal until a scan confirmed what it still leads [C1]. A broker
// cut off from the control store keeps leading, in its engine, partitions others may have taken
// meanwhile; this says those are not its own to acknowledge (the simulation audits the brokers'
// logs only once every broker acknowledges again: seed 159 read such a broker as a second leader).
// The same gate keeps it from serving reads as leader (L5): Fetch and ListOffsets answer
// NOT_LEADER_OR_FOLLOWER meanwhile, so consumers go to the partition's leader.
import { afterEach, expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { handleFetch } from '../../src/broker/handlers/fetch.ts';
import { handleListOffsets } from '../../src/broker/handlers/list-offsets.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf } from '../support/batches.ts';
import { fetchRequest, listOffsetsRequest } from '../support/requests.ts';
import { tempDir } from '../support/temp-dir.ts';

const LEASE_MS = 900;
/** Renewals run every leaseMs / 3; this many failed in a row outlast the lease's held share. */
const RENEWALS_FAILED = 3;
/** Steps of the manual clock, with the event loop let through between them (the store answers in promises). */
const STEP_MS = 10;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += STEP_MS) {
    clock.advance(STEP_MS);
    for (let turn = 0; turn < 20; turn++) await Promise.resolve();
  }
}

test('a cluster broker stops acknowledging once its lease lapses, and acknowledges again after a renewal and a scan', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock,
    cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: 100 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  running.push(broker);
  expect(broker.acknowledging).toBe(true);

  store.injectFault({ operation: 'put', kind: 'Unavailable', keyPrefix: 'control/brokers/', count: RENEWALS_FAILED });
  await advance(clock, LEASE_MS);
  expect(broker.acknowledging).toBe(false); // its lease may have ended in others' eyes

  await advance(clock, LEASE_MS); // the next renewal succeeds, then the confirming scan
  expect(broker.acknowledging).toBe(true);
});

test('a single broker always acknowledges', async () => {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock: new ManualClock(),
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } } },
  });
  running.push(broker);
  expect(broker.acknowledging).toBe(true);
});

/** A consumer's Fetch of r-0 from offset 0, answered at once (no long poll). */
async function fetchFirst(broker: Broker) {
  const request = fetchRequest({
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    forgottenTopicsData: [],
    rackId: '',
    topics: [{ topic: 'r', partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
  });
  return (await handleFetch(broker.context, request)).responses[0]!.partitions[0]!;
}

/** A consumer's ListOffsets of r-0's latest offset (the high watermark). */
async function latestOffset(broker: Broker) {
  const request = listOffsetsRequest({ replicaId: -1, isolationLevel: 0, topics: [{ name: 'r', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1 }] }] });
  return (await handleListOffsets(broker.context, request)).topics[0]!.partitions[0]!;
}

test('a leader whose lease lapsed refuses reads as a broker that does not lead, and serves again after a renewal and a scan (L5)', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock,
    cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: 100 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  running.push(broker);
  const created = broker.context.topology.createTopic('r', 1, 1);
  while (!broker.context.engine.leads('r', 0)) await advance(clock, STEP_MS);
  await created;
  const appended = await broker.context.engine.appendBatches('r', 0, batchOf('r0'));
  await Promise.all([appended.committed, advance(clock, STEP_MS * 5)]);
  expect(await fetchFirst(broker)).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: 1 });
  expect(await latestOffset(broker)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 1 });

  store.injectFault({ operation: 'put', kind: 'Unavailable', keyPrefix: 'control/brokers/', count: RENEWALS_FAILED });
  await advance(clock, LEASE_MS);
  expect(broker.context.engine.leads('r', 0)).toBe(true); // it still leads in its engine, but may no longer in others' eyes
  expect(await fetchFirst(broker)).toMatchObject({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, highWatermark: -1, records: [] });
  expect(await latestOffset(broker)).toMatchObject({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, offset: -1 });

  await advance(clock, LEASE_MS); // the next renewal succeeds, then the confirming scan
  expect(broker.acknowledging).toBe(true);
  expect(await fetchFirst(broker)).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: 1 });
  expect(await latestOffset(broker)).toMatchObject({ errorCode: ErrorCode.NONE, offset: 1 });
});
