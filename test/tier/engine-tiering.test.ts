// The engine tiers what it leads (docs/tier-protocol.md): an embedded Ferry with a WAL and a tier
// store copies each rolled segment below the high watermark, and the tier record says so.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { parseTieredSegmentKey } from '../../src/tier/keys.ts';
import { copiedSegments, TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { tempDir } from '../support/temp-dir.ts';

test('an embedded engine tiers its rolled segments into the tier store, under the topic id', async () => {
  const lines: string[] = [];
  const store = new MemoryStore();
  const control = new ControlStore(store, '');
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 4096 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control, intervalMs: 3_600_000 },
    report: (line) => lines.push(line),
  });
  const [topic] = [ferry.createTopic('events', { partitions: 1 })];
  for (let i = 0; i < 40; i++) await ferry.produce('events', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  let rounds = 0;
  while ((await ferry.tierer!.tierDue()) > 0) rounds++;
  const record = await new TierRecords(control).read(topic!.id, 0);
  expect(rounds).toBeGreaterThan(1);
  expect(tieredEnd(record)).toBeGreaterThan(0);
  expect(tieredEnd(record)).toBeLessThan(40); // the active segment stays
  const keys = (await store.list('tier/')).objects.map((object) => parseTieredSegmentKey(object.key));
  expect(keys.every((key) => key?.topicId === topic!.id)).toBe(true);
  expect(keys.map((key) => key!.uploadId).sort()).toEqual(
    copiedSegments(record)
      .map((segment) => segment.uploadId)
      .sort(),
  );
  await ferry.close();
});
