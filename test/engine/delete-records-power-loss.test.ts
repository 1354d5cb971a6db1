// DeleteRecords holds across a power loss of a WAL engine: the log start checkpoint is durable
// when the delete returns, and the rebuild of the lost local tail from the WAL (which still holds
// the deleted records) does not bring them back.
import { expect, test } from 'bun:test';
import { copyFileSync, mkdirSync, readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { LOCK_FILE } from '../../src/util/dir-lock.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { advanceThrough } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const UPLOAD_INTERVAL_MS = 10;
const EARLIEST = -2;

/** What a power cut leaves of an engine directory whose segments were never fdatasync'd: every .log file empty, the rest as written. */
function powerLossImage(source: string, target: string): void {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    if (entry.name === LOCK_FILE) continue;
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) powerLossImage(from, to);
    else {
      copyFileSync(from, to);
      if (entry.name.endsWith('.log')) truncateSync(to, 0);
    }
  }
}

test('after a power loss the rebuilt log starts at the log start DeleteRecords set, not at what the WAL holds', async () => {
  const clock = new ManualClock();
  const options = { clock, log: { flush: { kind: 'none' } as const }, wal: { store: new MemoryStore(), writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } };
  const directory = tempDir();
  const ferry = await Engine.open({ directory, ...options });
  ferry.createTopic('t');
  for (let i = 0; i < 5; i++) {
    const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `v${i}` }], { nowMs: clock.nowMs() }));
    await advanceThrough(clock, appended.committed, `the acknowledgement of ${i}`);
  }
  expect(ferry.deleteRecords('t', 0, 3)).toBe(3);
  const image = join(tempDir(), 'after-power-loss');
  powerLossImage(directory, image); // no clean close: only what was synced
  expect(statSync(join(image, 't-0', '00000000000000000000.log')).size).toBe(0);
  await ferry.close();

  const restarted = await Engine.open({ directory: image, ...options });
  expect(restarted.logEndOffset('t', 0)).toBe(5); // the tail came back from the WAL...
  expect(restarted.offsetFor('t', 0, EARLIEST).offset).toBe(3); // ...and what was deleted did not
  expect(() => restarted.fetch('t', 0, 2)).toThrow(/before the log start 3/);
  expect(restarted.fetch('t', 0, 3).batches[0]!.baseOffset).toBe(3);
  await restarted.close();
});

// Seed 5 of the simulation (issue 12's admin operations): a DeleteRecords to an offset inside a
// batch, then a power loss that took the local log below it. The log opened at that offset, and
// the rebuild found no batch of the WAL frame starting there: the broker never started again.
test('after a power loss the rebuild takes back the batch that holds a log start DeleteRecords set inside it', async () => {
  const clock = new ManualClock();
  const options = { clock, log: { flush: { kind: 'none' } as const }, wal: { store: new MemoryStore(), writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } };
  const directory = tempDir();
  const ferry = await Engine.open({ directory, ...options });
  ferry.createTopic('t');
  for (let i = 0; i < 5; i++) {
    const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `v${2 * i}` }, { value: `v${2 * i + 1}` }], { nowMs: clock.nowMs() }));
    await advanceThrough(clock, appended.committed, `the acknowledgement of ${i}`);
  }
  expect(ferry.deleteRecords('t', 0, 5)).toBe(5); // inside the batch 4..5
  const image = join(tempDir(), 'after-power-loss');
  powerLossImage(directory, image);
  await ferry.close();

  const restarted = await Engine.open({ directory: image, ...options });
  expect(restarted.logEndOffset('t', 0)).toBe(10);
  expect(restarted.offsetFor('t', 0, EARLIEST).offset).toBe(5);
  expect(() => restarted.fetch('t', 0, 4)).toThrow(/before the log start 5/);
  expect(restarted.fetch('t', 0, 5).batches[0]!.baseOffset).toBe(4); // the whole batch that holds it
  await restarted.close();
});
