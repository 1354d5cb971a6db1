// [W7] (docs/wal-protocol.md): a stream's object 0 lands before any other starts, so a writer that
// dies while object 0 is still on its way leaves no later object behind. Else the lowest object
// present (the WAL floor, which GC moves up) would be object 1: a successor would seal above it
// and readers would start there, a gap below every later offset (simulation seed 145).
import { expect, test } from 'bun:test';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed, listSequences } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { GatedStore } from '../support/gated-store.ts';
import { settle } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 1 };

function frame(offset: number) {
  return { topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) };
}

test('while object 0 is on its way no later object is put; a writer dying then leaves a stream sealed at 0', async () => {
  const gated = new GatedStore();
  const firstHeld = gated.holdNext(walObjectKey('p', STREAM, 0));
  const wal = new WalWriter(gated.store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, prefix: 'p', stream: STREAM }, { clock: new ManualClock(), random: new SeededRandom(1) });
  for (let offset = 0; offset < 6; offset++) {
    wal.append(frame(offset)).catch(() => {});
    await settle();
  }
  await firstHeld;
  await settle(10);
  expect([...(await listSequences(gated.inner, 'p', STREAM))]).toEqual([]); // object 0 held, nothing above it went
  // The writer dies here (object 0 never lands): its successor seals the stream at 0, below nothing.
  expect(await ensureSealed(gated.inner, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).toBe(0);
});

test('once object 0 is durable, later objects upload side by side again', async () => {
  const gated = new GatedStore();
  const firstHeld = gated.holdNext(walObjectKey('p', STREAM, 0));
  const wal = new WalWriter(gated.store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, prefix: 'p', stream: STREAM }, { clock: new ManualClock(), random: new SeededRandom(1) });
  const durable = [0, 1, 2, 3].map((offset) => wal.append(frame(offset)));
  await firstHeld;
  gated.hold(walObjectKey('p', STREAM, 1)); // object 1 stalls: objects 2 and 3 must not wait for it
  gated.release(walObjectKey('p', STREAM, 0));
  await durable[0];
  await settle(10);
  expect([...(await listSequences(gated.inner, 'p', STREAM))].sort()).toEqual([0, 2, 3]);
  gated.release(walObjectKey('p', STREAM, 1));
  await Promise.all(durable);
});
