// Issue 24: a takeover over a last tiered segment whose producer state is corrupt in the store
// (docs/tier-protocol.md [K2]). Failed when written: tierStartOf threw CorruptObject, the rebuild
// fell back to the chain from offset 0, which WAL GC had collected, so every adoption failed and
// the partition had no leader; now the new leader starts at the tiered end without that producer
// state, serves every record, takes produces, says what was lost and counts it.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { corruptLastProducers } from '../support/tier-corruption.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

/** How long the second broker is given to serve the partition: many times a healthy takeover's. */
const TAKEOVER_BOUND_MS = 10_000;
const RECORDS = 30;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

function idempotent(sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `p-${sequence}`.padEnd(200, '.') }], { nowMs: Date.now(), producerId: 77, producerEpoch: 0, baseSequence: sequence });
}

/** Each offset's batch bytes as `broker` serves them, from the tier below its log start. */
async function servedBatches(broker: Broker, end: number): Promise<Uint8Array[]> {
  const served: Uint8Array[] = [];
  for (let offset = 0; offset < end; offset++) {
    const [batch] = (await broker.context.engine.fetchWithTier('t', 0, offset)).batches;
    expect(batch?.baseOffset).toBe(offset);
    served.push(batch!.bytes.slice());
  }
  return served;
}

test("a takeover over a corrupt tiered producer state starts at the tier's end without it, serves every record and counts the loss", async () => {
  const store = new MemoryStore();
  const first = await startTieredBroker(store, 1, running);
  await first.context.topology.createTopic('t', 1);
  await until(() => first.context.engine.serves('t', 0), 'the first broker serving t-0', TAKEOVER_BOUND_MS);
  for (let sequence = 0; sequence < RECORDS; sequence++) await (await first.context.engine.appendBatches('t', 0, idempotent(sequence))).committed;
  while ((await first.context.engine.tierer!.tierDue()) > 0);
  const topicId = first.context.engine.topics()[0]!.id;
  const tieredEnd = first.context.engine.tierer!.tieredEndOf(topicId, 0)!;
  expect(tieredEnd).toBeGreaterThan(0);
  await first.context.engine.walCollector!.collect(); // the chain below the tier's end is gone: the tier alone can start a rebuild
  await first.context.engine.walCollector!.collect();
  const before = await servedBatches(first, RECORDS);
  const key = await corruptLastProducers(store, topicId);
  await first.stop(); // resigns its lease: the second broker takes over at once
  running.splice(running.indexOf(first), 1);

  const lines: string[] = [];
  const second = await startTieredBroker(store, 2, running, store, (line) => lines.push(line));
  await until(() => second.context.engine.serves('t', 0) && second.context.engine.leads('t', 0), 'the second broker leading t-0', TAKEOVER_BOUND_MS);
  expect(second.context.engine.offsetFor('t', 0, -2).offset).toBe(tieredEnd); // the local log starts at the tier's end
  expect(second.context.engine.offsetFor('t', 0, -1).offset).toBe(RECORDS);
  const after = await servedBatches(second, RECORDS);
  for (let offset = 0; offset < RECORDS; offset++) expect(Buffer.from(after[offset]!).equals(before[offset]!)).toBe(true);
  expect((await second.context.engine.appendBatches('t', 0, idempotent(RECORDS))).baseOffset).toBe(RECORDS);

  expect(second.metrics.renderPrometheus()).toContain('ferry_tier_producer_state_lost_total 1');
  const reported = lines.filter((line) => line.includes(key));
  expect(reported.length).toBe(1);
  expect(reported[0]).toContain('t-0');
  expect(reported[0]).toContain(`${tieredEnd}`);
});
