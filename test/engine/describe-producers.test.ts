// Kafka's DescribeProducers from a partition's producer state: each idempotent producer with its
// epoch, last sequence and last batch timestamp; no transactions (-1). Leader only.
import { expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

const T0 = Date.now(); // near the plain record's timestamp: producers expire by the log's own time

function batchOf(producerId: number, producerEpoch: number, baseSequence: number, count: number, timestamp: number): Uint8Array {
  const records = Array.from({ length: count }, (_, i) => ({ value: `p${producerId}-${baseSequence + i}`, timestamp }));
  return buildRecordBatch(records, { nowMs: timestamp, producerId, producerEpoch, baseSequence });
}

test('each idempotent producer with its epoch, last sequence and last timestamp; plain producers are not listed', async () => {
  const directory = tempDir();
  const ferry = await Engine.open({ directory });
  ferry.createTopic('t');
  await ferry.appendBatches('t', 0, batchOf(7, 0, 0, 3, T0));
  await ferry.appendBatches('t', 0, batchOf(7, 0, 3, 2, T0 + 10));
  await ferry.appendBatches('t', 0, batchOf(4, 2, 0, 1, T0 + 20));
  await ferry.produce('t', [{ value: 'plain' }], { partition: 0 });
  const expected = [
    { producerId: 4, producerEpoch: 2, lastSequence: 0, lastTimestamp: T0 + 20, coordinatorEpoch: -1, currentTxnStartOffset: -1 },
    { producerId: 7, producerEpoch: 0, lastSequence: 4, lastTimestamp: T0 + 10, coordinatorEpoch: -1, currentTxnStartOffset: -1 },
  ];
  expect(ferry.describeProducers('t', 0)).toEqual(expected);
  await ferry.close();
  const again = await Engine.open({ directory }); // the state is the log's: rebuilt the same
  expect(again.describeProducers('t', 0)).toEqual(expected);
  await again.close();
});

test('an unknown partition, and a followed one, are refused', async () => {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'follower');
  const kindOf = (action: () => unknown): FerryErrorKind | null => {
    try {
      action();
    } catch (error) {
      return isFerryError(error) ? error.kind : null;
    }
    return null;
  };
  expect(kindOf(() => ferry.describeProducers('t', 0))).toBe('NotLeader');
  expect(kindOf(() => ferry.describeProducers('t', 1))).toBe('UnknownTopicOrPartition');
  await ferry.close();
});
