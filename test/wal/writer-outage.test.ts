// Issue 9 finding 16: a store outage longer than any fixed retry budget (a full disk under the
// file store, an unreachable S3 endpoint) must not fail the WAL writer for good. With the default
// policy it retries until the store answers again, and what it then uploads is acknowledged.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../../src/wal/writer.ts';
import { advanceThrough } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

/** Far more failed PUTs than the eight attempts the writer allowed before. */
const FAILED_PUTS = 40;

test('an engine with the default WAL policy rides out a long store outage and acknowledges once the store is back', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const reports: string[] = [];
  const ferry = await Engine.open({ directory: tempDir(), clock, report: (line) => reports.push(line), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w' } });
  ferry.createTopic('t');
  store.injectFault({ operation: 'put', kind: 'Unavailable', count: FAILED_PUTS, keyPrefix: 'wal/' });
  const produced = ferry.produce('t', [{ value: 'through the outage' }], { acks: 'all' });
  // Each retry waits at most retry.capMs: step the clock through them all.
  const [record] = await advanceThrough(clock, produced, 'the acknowledgement after the outage', DEFAULT_WAL_WRITER_CONFIG.retry.capMs, FAILED_PUTS * DEFAULT_WAL_WRITER_CONFIG.retry.capMs * 2);
  expect(record).toEqual({ partition: 0, offset: 0 });
  expect(ferry.wal!.failure).toBeNull();
  expect(ferry.wal!.stats().retries).toBe(FAILED_PUTS);
  expect(reports.filter((line) => line.startsWith('WAL uploads failing')).length).toBe(1); // once per spell, not per retry
  expect(reports).toContain('WAL uploads succeed again');
  // ...and the next produce is acknowledged at once, without a restart.
  expect(await advanceThrough(clock, ferry.produce('t', [{ value: 'after' }], { acks: 'all' }), 'the next acknowledgement')).toEqual([{ partition: 0, offset: 1 }]);
  await ferry.close();
});
