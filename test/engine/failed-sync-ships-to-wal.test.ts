// Issue 9, findings 1 and 16: a failed fdatasync under the per-append flush policy keeps the
// batch in the local log (its request fails, its retry is a duplicate). With a WAL that batch
// must still reach the WAL: otherwise its retry was answered from a durability the original
// never had (an assertion, or an acknowledgement once a later batch was durable) and the stream
// had a gap where it should be, so a rebuild (a takeover) lost it.
import { afterEach, expect, test } from 'bun:test';
import { rebuildFromChain } from '../../src/partition/rebuild.ts';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { ensureSealed } from '../../src/wal/seal.ts';
import { failNext, healDisk } from '../support/failing-fs.ts';
import { tempDir } from '../support/temp-dir.ts';

const UPLOAD_INTERVAL_MS = 100;

afterEach(healDisk);

function idempotent(sequence: number, nowMs: number): Uint8Array {
  return buildRecordBatch([{ value: `s${sequence}` }], { nowMs, producerId: 9, producerEpoch: 0, baseSequence: sequence });
}

/** Appends and waits for the acknowledgement, moving the clock so WAL objects close; the outcome. */
async function produce(ferry: Engine, clock: ManualClock, batch: Uint8Array): Promise<number | string> {
  try {
    const appended = await ferry.appendBatches('t', 0, batch);
    clock.advance(UPLOAD_INTERVAL_MS);
    await appended.committed;
    return appended.baseOffset;
  } catch (error) {
    return (error as { kind?: string }).kind ?? String(error);
  }
}

test('a batch whose local fdatasync failed still goes to the WAL: its acknowledged retry survives a rebuild', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const ferry = await Engine.open({ directory: tempDir(), clock, log: { flush: { kind: 'per-append' } }, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } });
  const topicId = ferry.createTopic('t').id;
  const stream = ferry.wal!.config.stream;
  expect(await produce(ferry, clock, idempotent(0, clock.nowMs()))).toBe(0);
  failNext('fdatasyncSync');
  expect(await produce(ferry, clock, idempotent(1, clock.nowMs()))).toBe('Storage');
  expect(await produce(ferry, clock, idempotent(2, clock.nowMs()))).toBe(2); // pipelined: sent before the failure was known
  const retry = await produce(ferry, clock, idempotent(1, clock.nowMs()));
  expect(retry).toBe(1); // the original's offset, once it is durable
  await ferry.close();
  // A successor rebuilds the partition from the stream: every acknowledged offset is there.
  await ensureSealed(store, '', stream, { writerId: 'successor', nowMs: clock.nowMs() });
  const rebuilt = PartitionLog.open(tempDir());
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock, random: new SeededRandom(1) });
  const outcome = await rebuildFromChain(reader, rebuilt, [stream], topicId).then(
    () => 'rebuilt',
    (error: Error) => error.message,
  );
  expect(outcome).toBe('rebuilt');
  expect(rebuilt.logEndOffset).toBe(3);
  await rebuilt.close();
});

test('the retry of a batch whose local fdatasync failed is answered once that batch is durable in the WAL', async () => {
  const clock = new ManualClock();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    log: { flush: { kind: 'per-append' } },
    wal: { store: new MemoryStore(), writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } },
  });
  ferry.createTopic('t');
  expect(await produce(ferry, clock, idempotent(0, clock.nowMs()))).toBe(0);
  failNext('fdatasyncSync');
  expect(await produce(ferry, clock, idempotent(1, clock.nowMs()))).toBe('Storage');
  expect(await produce(ferry, clock, idempotent(1, clock.nowMs()))).toBe(1);
  expect(ferry.wal!.durableOffset(ferry.topics()[0]!.id, 0)).toBe(2);
  await ferry.close();
});
