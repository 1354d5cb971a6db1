// Leader epochs across a leader change in a cluster (docs/design.md contract 13, KIP-320): the epoch of
// the partition's control record is the one Metadata reports and Fetch, ListOffsets and
// OffsetForLeaderEpoch check; a consumer holding the old epoch is fenced, and the new leader says
// where the old epoch ended, so a consumer can tell whether its position was truncated.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { handleFetch } from '../../src/broker/handlers/fetch.ts';
import { handleMetadata } from '../../src/broker/handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from '../../src/broker/handlers/offset-for-leader-epoch.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { batchOf } from '../support/batches.ts';
import { until } from '../support/until.ts';
import { fetchRequest as fetchRequestOf, metadataRequest } from '../support/requests.ts';

setDefaultTimeout(60_000);

const root = mkdtempSync(join(tmpdir(), 'ferry-cluster-epochs-'));
const brokers: Broker[] = [];
const RECORDS_BEFORE = 5;

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function partitionMetadata(broker: Broker) {
  const response = await handleMetadata(
    broker.context,
    metadataRequest({ topics: [{ name: 'e' }], allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false }),
    12,
  );
  return response.topics[0]!.partitions[0];
}

function fetchAt(broker: Broker, currentLeaderEpoch: number) {
  return handleFetch(
    broker.context,
    fetchRequestOf({
      replicaId: -1,
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      forgottenTopicsData: [],
      rackId: '',
      topics: [{ topic: 'e', partitions: [{ partition: 0, currentLeaderEpoch, fetchOffset: 0, logStartOffset: -1, partitionMaxBytes: 1 << 20 }] }],
    }),
  ).then((response) => response.responses[0]!.partitions[0]!);
}

test('after a leader change the new epoch is reported and checked; the old one is fenced and its end offset answered', async () => {
  const store = new MemoryStore({ seed: 13 });
  for (const nodeId of [1, 2]) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        cluster: { store, leaseMs: 2000, scanIntervalMs: 100 },
        engine: { directory: join(root, `broker-${nodeId}`), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  await brokers[0]!.context.topology.createTopic('e', 1, 1);
  await until(() => brokers.some((b) => b.context.engine.leads('e', 0)), 'a leader of e-0');
  const first = brokers.find((b) => b.context.engine.leads('e', 0))!;
  const second = brokers.find((b) => b !== first)!;
  const oldEpoch = first.context.engine.leaderEpoch('e', 0);
  expect((await partitionMetadata(first))?.leaderEpoch).toBe(oldEpoch);
  for (let i = 0; i < RECORDS_BEFORE; i++) await (await first.context.engine.appendBatches('e', 0, batchOf(`r${i}`))).committed;

  await first.stop(); // resigns its lease: the other broker claims e-0 at the next epoch
  brokers.splice(brokers.indexOf(first), 1);
  await until(() => second.context.engine.leads('e', 0), 'the takeover of e-0');
  const newEpoch = second.context.engine.leaderEpoch('e', 0);
  expect(newEpoch).toBeGreaterThan(oldEpoch);
  expect(await partitionMetadata(second)).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 2, leaderEpoch: newEpoch });

  expect((await fetchAt(second, oldEpoch)).errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
  expect((await fetchAt(second, newEpoch + 1)).errorCode).toBe(ErrorCode.UNKNOWN_LEADER_EPOCH);
  const served = await fetchAt(second, newEpoch);
  expect(served).toMatchObject({ errorCode: ErrorCode.NONE, highWatermark: RECORDS_BEFORE });

  // A consumer at offset 5 in the old epoch asks where that epoch ended: at 5, so nothing it read was truncated.
  const answer = handleOffsetForLeaderEpoch(second.context, { replicaId: -1, topics: [{ topic: 'e', partitions: [{ partition: 0, currentLeaderEpoch: newEpoch, leaderEpoch: oldEpoch }] }] });
  expect(answer.topics[0]!.partitions[0]).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: oldEpoch, endOffset: RECORDS_BEFORE });
});
