// A single WAL engine restarting after WAL GC collected a prefix of its previous stream
// (docs/tier-protocol.md [G4]): the old stream is sealed at its end, not in the hole at 0 [F1],
// and the restart serves the whole log and goes on appending after it.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { listSequences } from '../../src/wal/floor.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { advanceThrough } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const BATCHES = 30;

test('a restart after GC collected a prefix of the previous stream seals it at its end and serves every offset', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  const options = {
    directory,
    clock,
    log: { segmentBytes: 1024 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 10 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  };
  const ferry = await Engine.open(options);
  const topicId = ferry.createTopic('t').id;
  for (let i = 0; i < BATCHES; i++) {
    const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `r${i}`.padEnd(100, '.') }], { nowMs: clock.nowMs() }));
    await advanceThrough(clock, appended.committed, `the acknowledgement of ${i}`);
  }
  while ((await ferry.tierer!.tierDue()) > 0);
  const tieredEnd = ferry.tierer!.tieredEndOf(topicId, 0)!;
  const stream = ferry.wal!.config.stream;
  await ferry.close();
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => false }, { clock, random: new SeededRandom(1) });
  let collected = 0;
  for (; ; collected++) {
    const index = await reader.readIndex(stream, collected);
    if (index.kind !== 'data' || index.entries.some((entry) => entry.lastOffset >= tieredEnd)) break;
    await store.delete(walObjectKey('', stream, collected));
  }
  expect(collected).toBeGreaterThan(1);
  const left = [...(await listSequences(store, '', stream))].sort((a, b) => a - b);

  const restarted = await Engine.open(options);
  const sealed = [...(await listSequences(store, '', stream))].sort((a, b) => a - b);
  expect(sealed).toEqual([...left, left.at(-1)! + 1]); // the seal right above the last object, not at 0
  expect((await reader.read(stream, left.at(-1)! + 1)).kind).toBe('seal');
  expect(restarted.logEndOffset('t', 0)).toBe(BATCHES);
  const next = await restarted.appendBatches('t', 0, buildRecordBatch([{ value: 'after' }], { nowMs: clock.nowMs() }));
  await advanceThrough(clock, next.committed, 'an append after the restart');
  expect(next.baseOffset).toBe(BATCHES);
  await restarted.close();
});
