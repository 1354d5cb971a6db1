// A Fetch answered from the local log names the whole log's start (docs/tier-protocol.md, LS):
// the tier's, once local retention dropped what the tier holds, as KIP-405's log_start_offset.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { RemoteReader, TIER_RECORD_REFRESH_MS } from '../../src/tier/remote-reader.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

test("a local fetch after local retention answers the tier's log start, not the local one", async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 2048, localRetentionBytes: 1 },
    wal: { store, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store, control: new ControlStore(store, ''), intervalMs: 3_600_000 },
  });
  try {
    ferry.createTopic('t', { partitions: 1 });
    for (let i = 0; i < 30; i++) await ferry.produce('t', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
    while ((await ferry.tierer!.tierDue()) > 0);
    expect(ferry.enforceRetention()).toBeGreaterThan(0);
    const localStart = ferry.localLogStartOffset('t', 0);
    expect(localStart).toBeGreaterThan(0);
    expect(ferry.fetch('t', 0, localStart).logStartOffset).toBe(localStart); // nothing read of the tier yet: this answer reads its record in the background
    let answer = ferry.fetch('t', 0, localStart);
    for (let waits = 0; answer.logStartOffset !== 0 && waits < 200; waits++) {
      await Bun.sleep(10);
      answer = ferry.fetch('t', 0, localStart);
    }
    expect(answer.logStartOffset).toBe(0);
    expect(answer.batches[0]!.baseOffset).toBe(localStart);
    expect((await ferry.fetchWithTier('t', 0, 0)).logStartOffset).toBe(0);
  } finally {
    await ferry.close();
  }
});

test('while the tier record cannot be read, local fetches start at most one background read of it per refresh interval', async () => {
  const store = new MemoryStore();
  let reads = 0;
  const records = new TierRecords(new ControlStore(store, ''));
  records.read = async () => {
    reads++;
    throw new Error('injected: the control store is down');
  };
  const clock = new ManualClock();
  const reader = new RemoteReader({ store, prefix: '', records, clock });
  for (let i = 0; i < 100; i++) {
    expect(reader.peekLogStartOffset(idOf('t'), 0)).toBeNull();
    await Bun.sleep(0);
  }
  expect(reads).toBe(1);
  clock.advance(TIER_RECORD_REFRESH_MS);
  reader.peekLogStartOffset(idOf('t'), 0);
  await Bun.sleep(0);
  expect(reads).toBe(2);
});
