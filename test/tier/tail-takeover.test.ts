// A takeover rebuilds only the tail (docs/tier-protocol.md [K2], KI1): a broker that adopts a
// tiered partition on an empty disk starts its log at the tier's end, with the tier's leader
// epochs and producer state there, and takes from the WAL only the frames from there on; an
// idempotent producer's retry of a batch below the tier's end is still answered as a duplicate.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

function start(store: ObjectStore, nodeId: number): Promise<Broker> {
  return startTieredBroker(store, nodeId, running);
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

const T0 = Date.now();

function idempotent(sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `p-${sequence}`.padEnd(200, '.'), timestamp: T0 }], { nowMs: T0, producerId: 77, producerEpoch: 0, baseSequence: sequence });
}

test("a broker taking over a tiered partition on an empty disk starts at the tier's end and knows its producers there", async () => {
  const store = new MemoryStore();
  const first = await start(store, 1);
  await first.context.topology.createTopic('t', 1);
  await until(() => first.context.engine.serves('t', 0), 'the first adoption');
  const engine = first.context.engine;
  for (let sequence = 0; sequence < 30; sequence++) await (await engine.appendBatches('t', 0, idempotent(sequence))).committed;
  while ((await engine.tierer!.tierDue()) > 0);
  const topicId = engine.topics()[0]!.id;
  const tieredEnd = engine.tierer!.tieredEndOf(topicId, 0)!;
  expect(tieredEnd).toBeGreaterThan(5);
  await first.stop(); // its lease is resigned: the second broker takes over at once
  running.splice(running.indexOf(first), 1);

  const second = await start(store, 2);
  await until(() => second.context.engine.serves('t', 0) && second.context.engine.leads('t', 0), 'the takeover');
  const log = second.context.engine.offsetFor('t', 0, -2);
  expect(log.offset).toBe(tieredEnd); // the local log starts at the tier's end: nothing below was read into it
  expect(second.context.engine.offsetFor('t', 0, -1).offset).toBe(30);
  const tail = second.context.engine.fetch('t', 0, tieredEnd).batches;
  expect(tail[0]!.baseOffset).toBe(tieredEnd);
  // the producer's last batches below the tier's end are known: a retry of the one just below is a duplicate
  const retried = await second.context.engine.appendBatches('t', 0, idempotent(tieredEnd - 1));
  expect(retried.baseOffset).toBe(tieredEnd - 1);
  const next = await second.context.engine.appendBatches('t', 0, idempotent(30));
  expect(next.baseOffset).toBe(30);
  expect(second.context.engine.endOffsetForLeaderEpoch('t', 0, 0).endOffset).toBe(30); // epoch 0 ended where epoch 1 started
});
