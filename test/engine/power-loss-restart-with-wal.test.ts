// A single engine (a single broker) that ships to a WAL keeps its local log unsynced: durability
// is the WAL's (the broker runs the log with flush `none`, KIP-1176). A power loss then drops the
// local tail that acks=all acknowledged, and the WAL holds it. The restart must serve it (rebuild
// the tail from its own sealed streams, as a cluster takeover does), and an idempotent retry of
// the last acknowledged batch must be a duplicate at its acknowledged offset. On main it refused
// to start ("a single engine cannot rebuild its tail from object storage") until someone deleted
// data by hand.
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

function idempotent(sequence: number, nowMs: number): Uint8Array {
  return buildRecordBatch([{ value: `s${sequence}` }], { nowMs, producerId: 4, producerEpoch: 0, baseSequence: sequence });
}

/** What a power cut leaves of an engine directory whose segments under `lost` were never fdatasync'd: those .log files empty. */
function powerLossImage(source: string, target: string, lost: string, within = false): void {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    if (entry.name === LOCK_FILE) continue;
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) powerLossImage(from, to, lost, within || entry.name === lost);
    else {
      copyFileSync(from, to);
      if (within && entry.name.endsWith('.log')) truncateSync(to, 0);
    }
  }
}

test('after a power loss a WAL engine serves what its WAL acknowledged, and a retry of it is a duplicate', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  const options = { clock, log: { flush: { kind: 'none' } as const }, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } };
  const ferry = await Engine.open({ directory, ...options });
  ferry.createTopic('t', { partitions: 2 });
  for (let sequence = 0; sequence < 3; sequence++) {
    const appended = await ferry.appendBatches('t', 0, idempotent(sequence, clock.nowMs()));
    await advanceThrough(clock, appended.committed, `the acknowledgement of ${sequence}`);
  }
  await advanceThrough(clock, (await ferry.appendBatches('t', 1, buildRecordBatch([{ value: 'p1' }], { nowMs: clock.nowMs() }))).committed, 'partition 1');
  const image = join(tempDir(), 'after-power-loss');
  powerLossImage(directory, image, 't-0'); // partition 1's log survived (say it had rolled)
  expect(statSync(join(image, 't-0', '00000000000000000000.log')).size).toBe(0);
  await ferry.close();

  const restarted = await Engine.open({ directory: image, ...options }).catch((error: Error) => error);
  expect(restarted).toBeInstanceOf(Engine);
  const engine = restarted as Engine;
  expect(engine.logEndOffset('t', 0)).toBe(3);
  expect(engine.logEndOffset('t', 1)).toBe(1);
  const retry = await engine.appendBatches('t', 0, idempotent(2, clock.nowMs()));
  expect(retry.baseOffset).toBe(2);
  await engine.close();
});
