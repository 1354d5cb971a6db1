// WAL uploads now retry retriable faults without a bound (issue 9 finding 16). Closing the engine
// (a broker's SIGTERM) flushes the WAL first; during an outage that flush never ended, so the
// broker never stopped, never gave up its lease and never released its directory. A close must
// end in bounded time whatever the store does; what was not shipped stays in the local log and is
// shipped again by the next start (nothing that was acknowledged with acks=all depends on it).
import { expect, setDefaultTimeout, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { advanceThrough, settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

/** Simulated time a close may take during an outage before the test calls it wedged: ten minutes. */
const CLOSE_WAIT_MS_MAX = 10 * 60 * 1000;
const STEP_MS = 1000;
/** Real time left for the file I/O of a close once its simulated waits are over (a loaded machine). */
const CLOSE_IO_WAIT_MS = 20_000;

test('close ends during a store outage that outlasts it, and the next start ships what was left', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  const ferry = await Engine.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w' } });
  ferry.createTopic('t');
  store.injectFault({ operation: 'put', kind: 'Unavailable', count: Number.MAX_SAFE_INTEGER, keyPrefix: 'wal/' });
  const [record] = await ferry.produce('t', [{ value: 'in the local log only' }], { acks: 1 });
  expect(record).toEqual({ partition: 0, offset: 0 });
  const closed = ferry.close();
  let done = false;
  void closed.finally(() => (done = true)).catch(() => {});
  for (let elapsedMs = 0; !done && elapsedMs < CLOSE_WAIT_MS_MAX; elapsedMs += STEP_MS) {
    clock.advance(STEP_MS);
    await settle();
  }
  // Past the simulated wait only real I/O (the logs' last fdatasync) remains: a real-time bound on it.
  await Promise.race([closed, Bun.sleep(CLOSE_IO_WAIT_MS).then(() => Promise.reject(new Error('close during the outage did not end')))]);
  // The directory is released and still holds the record: a start (here on a store that answers) ships it.
  const again = await Engine.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'w' } });
  expect(again.logEndOffset('t', 0)).toBe(1);
  expect(await advanceThrough(clock, again.produce('t', [{ value: 'after' }], { acks: 'all' }), 'the next acknowledgement')).toEqual([{ partition: 0, offset: 1 }]);
  await again.close();
});
