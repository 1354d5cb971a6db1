// A single WAL engine whose local log lost its unsynced tail (a power loss) rebuilds it from its
// own streams, each from its WAL floor. When WAL GC already collected the start of the lost range
// (the tier covers it, docs/tier-protocol.md GI1), the log starts over at the tier's end, as on a
// fresh disk [K2], and serves every acknowledged offset from there, byte for byte.
import { expect, test } from 'bun:test';
import { copyFileSync, mkdirSync, readdirSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine, type EngineOptions } from '../../src/engine/index.ts';
import type { TopicId } from '../../src/format/topic-id.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { LOCK_FILE } from '../../src/util/dir-lock.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { advanceThrough } from '../support/settle.ts';
import { corruptLastProducers } from '../support/tier-corruption.ts';
import { tempDir } from '../support/temp-dir.ts';

const UPLOAD_INTERVAL_MS = 10;
const BATCHES = 30;

/**
 * A power cut's image of an engine directory: of each partition only its first segment's files
 * are left (the later ones were never made durable in the directory), its .log empty (never synced).
 */
function powerLossImage(source: string, target: string, within = false): void {
  mkdirSync(target, { recursive: true });
  for (const entry of readdirSync(source, { withFileTypes: true })) {
    if (entry.name === LOCK_FILE) continue;
    const from = join(source, entry.name);
    const to = join(target, entry.name);
    if (entry.isDirectory()) powerLossImage(from, to, within || entry.name.startsWith('t-'));
    else {
      const segmentFile = /^\d{20}\./.test(entry.name);
      if (within && segmentFile && !entry.name.startsWith('00000000000000000000.')) continue;
      copyFileSync(from, to);
      if (within && entry.name.endsWith('.log')) truncateSync(to, 0);
    }
  }
}

function hex(ferry: Engine, from: number): string[] {
  const out: string[] = [];
  for (let at = from; at < ferry.logEndOffset('t', 0); ) {
    const { batches } = ferry.fetch('t', 0, at);
    for (const batch of batches) out.push(Buffer.from(batch.bytes).toString('hex'));
    at = batches.at(-1)!.lastOffset + 1;
  }
  return out;
}

/** What a lost-tail scenario leaves: an engine directory after a power loss, its WAL's collected prefix, the tier beyond it. */
interface LostTail {
  readonly store: MemoryStore;
  readonly image: string;
  readonly options: Omit<EngineOptions, 'directory'>;
  readonly topicId: TopicId;
  readonly tieredEnd: number;
  /** The batches from the tier's end on, as the engine served them before the power loss. */
  readonly expected: string[];
}

/** BATCHES acknowledged and tiered, the directory's image after a power loss, and WAL GC of every object below the tier's end. */
async function lostTailBelowTheTiersEnd(): Promise<LostTail> {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  const options = {
    clock,
    log: { flush: { kind: 'none' } as const, segmentBytes: 1024 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  };
  const ferry = await Engine.open({ directory, ...options });
  const topicId = ferry.createTopic('t').id;
  for (let i = 0; i < BATCHES; i++) {
    const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `r${i}`.padEnd(100, '.') }], { nowMs: clock.nowMs() }));
    await advanceThrough(clock, appended.committed, `the acknowledgement of ${i}`);
  }
  while ((await ferry.tierer!.tierDue()) > 0);
  const tieredEnd = ferry.tierer!.tieredEndOf(topicId, 0)!;
  expect(tieredEnd).toBeGreaterThan(2);
  const expected = hex(ferry, tieredEnd);
  const stream = ferry.wal!.config.stream;
  const image = join(tempDir(), 'after-power-loss');
  powerLossImage(directory, image);
  await ferry.close();

  // WAL GC [G4]: the stream's objects whose every frame lies below the tier's end, oldest first.
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => false }, { clock, random: new SeededRandom(1) });
  let collected = 0;
  for (; ; collected++) {
    const index = await reader.readIndex(stream, collected);
    if (index.kind !== 'data' || index.entries.some((entry) => entry.lastOffset >= tieredEnd)) break;
    await store.delete(walObjectKey('', stream, collected));
  }
  expect(collected).toBeGreaterThan(1);
  return { store, image, options, topicId, tieredEnd, expected };
}

test("a lost tail whose start WAL GC collected restarts the log at the tier's end and serves the rest", async () => {
  const { image, options, tieredEnd, expected } = await lostTailBelowTheTiersEnd();
  const lines: string[] = [];
  const restarted = await Engine.open({ directory: image, ...options, report: (line: string) => lines.push(line) });
  expect(restarted.offsetFor('t', 0, -2).offset).toBe(tieredEnd); // the local log starts there
  expect(restarted.logEndOffset('t', 0)).toBe(BATCHES);
  expect(hex(restarted, tieredEnd)).toEqual(expected);
  expect(lines.join('\n')).toContain("starts over at the tier's end");
  await restarted.close();
});

// Issue 24: failed when written (the open threw CorruptObject from tierStartOf).
test("a lost tail over a tier whose last producer state is corrupt still restarts at the tier's end, and counts the loss", async () => {
  const { store, image, options, topicId, tieredEnd, expected } = await lostTailBelowTheTiersEnd();
  const key = await corruptLastProducers(store, topicId);
  const lines: string[] = [];
  const metrics = new MetricsRegistry();
  const restarted = await Engine.open({ directory: image, ...options, metrics, report: (line: string) => lines.push(line) });
  expect(restarted.offsetFor('t', 0, -2).offset).toBe(tieredEnd);
  expect(hex(restarted, tieredEnd)).toEqual(expected);
  expect(metrics.renderPrometheus()).toContain('ferry_tier_producer_state_lost_total 1');
  expect(lines.filter((line) => line.includes(key)).length).toBe(1);
  await restarted.close();
});
