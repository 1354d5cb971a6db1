// Review finding (fixed; it was low-medium): with WAL uploads retried without a bound, an engine opened
// during a store outage whose local log holds an unshipped suffix larger than the WAL's upload
// buffer (maxBufferedBytes) never finished opening: reshipUnshipped waited for room (wal.reserve,
// no signal) that only a successful upload frees. The broker CLI installs its SIGTERM handler
// before it starts, so a broker stuck there ignored SIGTERM until the store answered again. Now the
// open waits for room a bounded time (RESHIP_ROOM_WAIT_MS) and then fails in one line, and a
// supervisor's restart tries again; the re-ship still never holds more than the buffer (see
// reship-whole-log-unbounded.test.ts). How likely: a run's unshipped suffix is bounded by its own
// buffer, so the second run here has a smaller one.
import { expect, test } from 'bun:test';
import { Ferry, isFerryError } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

/** Moves the clock on by `ms` in one-second steps (retries, the close's wait for the store), then waits for `promise`'s real I/O. */
async function stepThen<T>(clock: ManualClock, ms: number, promise: Promise<T>): Promise<T> {
  for (let elapsedMs = 0; elapsedMs < ms; elapsedMs += 1000) {
    clock.advance(1000);
    await settle();
  }
  return promise;
}

const KiB = 1024;
/** The upload buffer of the second run: smaller than the suffix the first run could not ship. */
const BUFFER_BYTES = 256 * KiB;
const RECORD_BYTES = 16 * KiB;
const RECORDS = 200; // about 3 MiB, several re-ship steps of 1 MiB
const OUTAGE_PUTS = 1_000_000;

test('an engine opened during a store outage with a large unshipped suffix fails in one line after a bounded wait, instead of hanging', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  store.injectFault({ operation: 'put', kind: 'Unavailable', count: OUTAGE_PUTS, keyPrefix: 'wal/' });
  const first = await Ferry.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w' } });
  first.createTopic('t');
  for (let i = 0; i < RECORDS; i++) await first.produce('t', [{ value: 'x'.repeat(RECORD_BYTES) }], { acks: 1 });
  await stepThen(clock, 60_000, first.close()); // gives up on the store after its wait
  let outcome: unknown = null;
  const second = Ferry.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w', config: { uploadBytes: BUFFER_BYTES / 4, maxBufferedBytes: BUFFER_BYTES } } });
  second.then(
    (ferry) => (outcome = ferry),
    (error: unknown) => (outcome = error),
  );
  for (let elapsedMs = 0; elapsedMs < 180_000 && outcome === null; elapsedMs += 1000) {
    clock.advance(1000);
    await settle();
  }
  await until(() => outcome !== null, 'the second open to settle', 5_000);
  expect(isFerryError(outcome, 'Storage')).toBe(true);
  expect(String((outcome as Error).message)).toContain('could not be re-shipped');
  expect(String((outcome as Error).message)).not.toContain('\n');
}, 60_000);
