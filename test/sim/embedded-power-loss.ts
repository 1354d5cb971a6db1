// The scenario of test/review/issue27-wal-flush-none-loses-tiered-tail.test.ts, for the switch
// `embedded-tier-end-not-durable` (test/sim/regressions.test.ts): an embedded engine with a WAL and
// the WAL's default flush 'none' tiers a partition's acknowledged records and collects their WAL
// objects before its first shipped checkpoint, then loses power. What it serves after the restart,
// and where its next record goes, say whether its open counted the tier's end durable.
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { settle } from '../support/settle.ts';

/** Small enough that partition 0's records roll a segment (a sync) and leave records after it. */
const SEGMENT_BYTES = 2048;
/** Records acknowledged on partition 0 before the power loss. */
export const RECORDS = 12;
const VALUE_BYTES = 300;
const STEP_MS = 5;
/** Well inside the shipped checkpoint's first second: nothing below is checkpointed. */
const RUN_STEPS = 60;
const START_MS = 1_000_000;
/** Manual clock steps a call may take before the scenario gives up on it. */
const DRIVE_STEPS_MAX = 5000;

export interface AfterPowerLoss {
  /** Offsets acknowledged before the power loss that the restarted engine does not serve with their value. */
  readonly lost: readonly number[];
  /** Where the next record was written after the restart (RECORDS when nothing was lost). */
  readonly nextOffset: number;
  /** Partition 0's log end after that record. */
  readonly logEndOffset: number;
  /** Partition 0's tiered end once its records were acknowledged (the scenario needs RECORDS). */
  readonly tieredEndBeforeLoss: number | null;
  /** Simulated ms from the start to the power loss (the scenario needs less than the first shipped checkpoint's second). */
  readonly msBeforeLoss: number;
}

async function drive<T>(clock: ManualClock, promise: Promise<T>): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let step = 0; step < DRIVE_STEPS_MAX && !settled; step++) {
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

/** The value at `offset` as a reader gets it: from the local log, or below its start from the tier. */
async function valueAt(engine: Engine, clock: ManualClock, offset: number): Promise<string | null> {
  for (const batch of (await drive(clock, engine.fetchWithTier('t', 0, offset))).batches) {
    let at = batch.baseOffset;
    for (const record of batch.records()) {
      if (at++ === offset) return record.value === null ? null : new TextDecoder().decode(record.value);
    }
  }
  return null;
}

export async function embeddedPowerLossAfterGc(): Promise<AfterPowerLoss> {
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
  const tieredEndBeforeLoss = engine.tierer!.tieredEndOf(topicId, 0);
  // Partition 1 goes on writing, so WAL GC may collect the objects below (the stream's highest stays).
  for (let index = 0; index < 3; index++) await drive(clock, engine.produce('t', [{ value: `b${index}` }], { acks: 'all', partition: 1 }));
  await pass(clock, RUN_STEPS / 2);
  const msBeforeLoss = clock.nowMs() - START_MS;
  disk.crash(); // a power loss: the local log keeps what it synced, up to its roll

  const restartClock = new ManualClock(clock.nowMs() + 1000);
  const restarted = await drive(restartClock, Engine.open(optionsAt(restartClock)));
  await pass(restartClock, RUN_STEPS / 2);
  const lost: number[] = [];
  for (const [offset, value] of acked) if (offset >= restarted.logEndOffset('t', 0) || (await valueAt(restarted, restartClock, offset)) !== value) lost.push(offset);
  const [next] = await drive(restartClock, restarted.produce('t', [{ value: 'after the restart' }], { acks: 'all', partition: 0 }));
  const logEndOffset = restarted.logEndOffset('t', 0);
  await drive(restartClock, restarted.close());
  return { lost, nextOffset: next!.offset, logEndOffset, tieredEndBeforeLoss, msBeforeLoss };
}
