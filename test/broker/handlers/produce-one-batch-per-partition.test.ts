// Kafka's ProduceRequest.validateRecords refuses, in every version Ferry serves (v3+), a
// partition's records holding more than one batch: INVALID_RECORD for that partition, nothing of it
// appended, the other partitions of the request served. Ferry's handler appended them all (found
// while building issue 25's request shapes: no Kafka client sends them).
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleProduce } from '../../../src/broker/handlers/produce.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { SingleBrokerTopology } from '../../../src/broker/topology.ts';
import { Engine } from '../../../src/engine/index.ts';
import { buildRecordBatch } from '../../../src/format/batch-builder.ts';
import { concatBytes } from '../../../src/util/bytes.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

test('a partition whose records hold two batches is refused with INVALID_RECORD; the others are appended', async () => {
  const engine = await Engine.open({ directory: tempDir(), log: { flush: { kind: 'none' } } });
  engine.createTopic('t', { partitions: 2 });
  const context = {
    ...OPEN_SECURITY,
    nodeId: 1,
    engine,
    clock: { nowMs: () => 0, monotonicMs: () => 0, setTimer: () => ({ cancel: () => {} }) },
    topology: new SingleBrokerTopology({ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }, engine),
  } as unknown as BrokerContext;
  const batch = (value: string) => buildRecordBatch([{ value }], { nowMs: 0 });
  const twoBatches = concatBytes([batch('a'), batch('b')]);
  const answer = await handleProduce(context, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 1_000,
    topicData: [
      {
        name: 't',
        partitionData: [
          { index: 0, records: twoBatches },
          { index: 1, records: batch('c') },
        ],
      },
    ],
  });
  const [two, one] = answer!.responses[0]!.partitionResponses;
  expect(two!.errorCode).toBe(ErrorCode.INVALID_RECORD);
  expect(two!.errorMessage).toContain('exactly one record batch per partition');
  expect(one!.errorCode).toBe(ErrorCode.NONE);
  expect([engine.logEndOffset('t', 0), engine.logEndOffset('t', 1)]).toEqual([0, 1]);
  await engine.close();
});
