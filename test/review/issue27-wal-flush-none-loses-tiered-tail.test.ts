// Review of issue 27's withWalFlushDefault: an embedded engine with a WAL now leaves its local log
// unsynced (flush 'none') unless told otherwise. After a power loss, OwnPartitions finds a lost
// tail only where the WAL's shipped ends (the shipped checkpoint, saved every second, plus the
// objects after it) lie above the recovered local log. WAL GC deletes objects whose frames the tier
// covers, so the records acknowledged after the last checkpoint, tiered and collected since, show
// in neither: the local log recovers to its last sync (a roll), below them, no rebuild runs, and
// the partition serves a log that ends below offsets acks=all named. The next append takes those
// offsets again, for other records, while the tier holds the acknowledged ones there.
// On 98f6344 (the group commit default) the local log was synced within a tick of each append,
// long before the WAL object landed, and this passes; with `flush: { kind: 'none' }` given
// explicitly it fails there too: the detection (OwnPartitions.openTopic's durableEnd, the shipped
// ends only, not the tier's end) predates issue 27, which makes it every WAL engine's default.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { settle } from '../support/settle.ts';

/** Small enough that partition 0's records roll a segment (a sync) and leave records after it. */
const SEGMENT_BYTES = 2048;
const RECORDS = 12;
const VALUE_BYTES = 300;
const STEP_MS = 5;
/** Well inside the shipped checkpoint's first second: nothing below is checkpointed. */
const RUN_STEPS = 60;
const START_MS = 1_000_000;

async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let step = 0; step < 5000 && !settled; step++) {
    await settle(2);
    if (!settled) clock.advance(1);
  }
  return promise;
}

async function pass(clock: ManualClock, steps: number): Promise<void> {
  for (let step = 0; step < steps; step++) {
    clock.advance(STEP_MS);
    await settle(3);
  }
}

/** The value at `offset` as a reader gets it: from the local log, or below its start from the tier [D2]. */
async function valueAt(engine: Engine, partition: number, offset: number): Promise<string | null> {
  for (const batch of (await engine.fetchWithTier('t', partition, offset)).batches) {
    let at = batch.baseOffset;
    for (const record of batch.records()) {
      if (at++ === offset) return record.value === null ? null : new TextDecoder().decode(record.value);
    }
  }
  return null;
}

test('after a power loss an embedded WAL engine serves every acks=all record, also those tiered and collected from the WAL since the last checkpoint', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const store = new MemoryStore();
  const optionsAt = (clock: ManualClock): EngineOptions => ({
    directory: '/data',
    disk,
    clock,
    random: new SeededRandom(2),
    logger: () => {},
    log: { segmentBytes: SEGMENT_BYTES }, // no flush policy: the WAL's default
    wal: { store, writerId: 'w', config: { uploadIntervalMs: STEP_MS } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 4 * STEP_MS, tailMaxBytes: 1 },
    walGcIntervalMs: 4 * STEP_MS,
    walGcIdlePassMs: 4 * STEP_MS,
  });
  const clock = new ManualClock(START_MS);
  const engine = await drive(clock, Engine.open(optionsAt(clock)));
  const topicId = engine.createTopic('t', { partitions: 2 }).id;
  const acked = new Map<number, string>();
  for (let index = 0; index < RECORDS; index++) {
    const value = `a${index}`.padEnd(VALUE_BYTES, '.');
    const [produced] = await drive(clock, engine.produce('t', [{ value }], { acks: 'all', partition: 0 }));
    acked.set(produced!.offset, value);
  }
  await pass(clock, RUN_STEPS / 4);
  expect(engine.tierer!.tieredEndOf(topicId, 0)).toBe(RECORDS); // partition 0 is tiered to its end
  // Partition 1 goes on writing, so WAL GC may collect the objects below (the stream's highest stays).
  for (let index = 0; index < 3; index++) await drive(clock, engine.produce('t', [{ value: `b${index}` }], { acks: 'all', partition: 1 }));
  await pass(clock, RUN_STEPS / 2);
  expect(clock.nowMs() - START_MS).toBeLessThan(1000); // before the first shipped checkpoint
  disk.crash(); // a power loss: the local log keeps what it synced, up to its roll

  const restartClock = new ManualClock(clock.nowMs() + 1000);
  const restarted = await drive(restartClock, Engine.open(optionsAt(restartClock)));
  await pass(restartClock, RUN_STEPS / 2);
  const lost: number[] = [];
  for (const [offset, value] of acked) if (offset >= restarted.logEndOffset('t', 0) || (await drive(restartClock, valueAt(restarted, 0, offset))) !== value) lost.push(offset);
  const [next] = await drive(restartClock, restarted.produce('t', [{ value: 'after the restart' }], { acks: 'all', partition: 0 }));
  const logEndOffset = restarted.logEndOffset('t', 0);
  await drive(restartClock, restarted.close());
  expect({ lost, logEndOffset }).toEqual({ lost: [], logEndOffset: RECORDS + 1 });
  expect(next!.offset).toBe(RECORDS); // not an offset an earlier acknowledgement named
});
