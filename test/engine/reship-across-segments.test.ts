// Simulation (tiering runs, small segment.bytes, a power loss: a stress seed 195 with 2 KiB
// segments): a restarted leader re-ships its local suffix that no earlier stream got
// (Partition.reshipUnshipped). It reads the suffix with PartitionLog.read, which returns whole
// batches across segment files, and it sent each run of one leader epoch as one frame, taking the
// frame's bytes as one span of the first batch's buffer up to the end of the last. Batches of two
// segments lie in two buffers: the span ran out of the buffer's range (a RangeError at every
// start: the broker never served again), or, inside it, was not the batches (below, before the
// fix: the WAL got 4 of the 40 batches). A log of several small segments, opened with a WAL it
// never shipped to, must open and ship exactly its batches.
import { expect, test } from 'bun:test';
import { Ferry } from '../../src/ferry/index.ts';
import { splitBatches } from '../../src/format/batch-parse.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { settle } from '../support/settle.ts';

const SEGMENT_BYTES = 1024;
const RECORDS = 40;
const RECORD_BYTES = 100;
const UPLOAD_INTERVAL_MS = 5;
/** Clock steps while the WAL uploads at the interval (and the close flushes). */
const UPLOAD_STEPS = 200;
const BATCH_BYTES_MAX = 0xffff_ffff;

test('a restart re-ships an unshipped suffix that spans segments, batch for batch', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const clock = new ManualClock();
  const log = { flush: { kind: 'none' } as const, segmentBytes: SEGMENT_BYTES };
  const first = await Ferry.open({ directory: '/data', disk, clock, log }); // no WAL yet: the whole log is unshipped
  first.createTopic('t');
  for (let i = 0; i < RECORDS; i++) await first.produce('t', [{ value: `${i}`.padEnd(RECORD_BYTES, '.') }], { acks: 1 });
  const local = first.fetch('t', 0, 0, { maxBytes: BATCH_BYTES_MAX }).batches.map((batch) => Buffer.from(batch.bytes).toString('hex'));
  expect(local).toHaveLength(RECORDS);
  await first.close();

  const store = new MemoryStore();
  const opening = Ferry.open({ directory: '/data', disk, clock, log, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } });
  let opened: Ferry | null = null;
  let failure: unknown = null;
  opening.then(
    (ferry) => void (opened = ferry),
    (error: unknown) => void (failure = error),
  );
  for (let step = 0; step < UPLOAD_STEPS && opened === null && failure === null; step++) {
    await settle();
    clock.advance(UPLOAD_INTERVAL_MS);
  }
  expect(failure).toBeNull();
  expect(opened).not.toBeNull();
  const closing = opened!.close();
  for (let step = 0; step < UPLOAD_STEPS; step++) {
    await settle();
    clock.advance(UPLOAD_INTERVAL_MS);
  }
  await closing;

  const shipped: string[] = [];
  for (const { key } of (await store.list('')).objects.filter((object) => object.key.startsWith('wal/')).sort((a, b) => a.key.localeCompare(b.key))) {
    const { body } = await store.get(key);
    let object: ReturnType<typeof decodeWalObject>;
    try {
      object = decodeWalObject(body);
    } catch {
      continue; // a seal
    }
    for (const { data } of object.frames) shipped.push(...splitBatches(data, BATCH_BYTES_MAX).map((batch) => Buffer.from(batch.bytes).toString('hex')));
  }
  expect(shipped).toEqual(local);
});
