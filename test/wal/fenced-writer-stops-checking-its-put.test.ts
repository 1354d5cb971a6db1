// Review finding: with uploads retried without a bound (UPLOAD_ATTEMPTS_UNBOUNDED), the writer's
// check after a PreconditionFailed ("did my earlier attempt land?", #isOurs) retried its GET
// without a bound too, and without looking at whether the writer was fenced meanwhile. A writer
// fenced (a close that gave up on the store, startNewWalEpoch, a seal) while the store's reads
// fail kept issuing GETs for ever: a background loop no close ends, and its timers keep a
// stopped broker's event loop alive.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { advanceUntil, settle } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

/** Reads that keep failing: far more than the writer could ever make in the simulated time. */
const FAILING_GETS = 1_000_000;
/** Simulated time after the fence: at retry.capMs per retry, dozens of GETs if the loop went on. */
const AFTER_FENCE_MS = 60_000;

test('a fenced writer stops checking whether its lost put landed', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const config = { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, prefix: 'cluster', stream: { writerId: 'w', epoch: 1 } };
  expect(config.retry.attempts).toBe(Number.POSITIVE_INFINITY);
  const wal = new WalWriter(store, config, { clock, random: new SeededRandom(1) });
  // The first put lands but its answer is lost; the retry meets PreconditionFailed and reads the key back.
  store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
  store.injectFault({ operation: 'get', kind: 'Unavailable', count: FAILING_GETS });
  const durable = wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('x') });
  durable.catch(() => {});
  await advanceUntil(clock, () => store.stats().requests.get >= 3, 'the writer reading its key back', 10);
  wal.fence('the engine closed');
  expect(
    await durable.then(
      () => 'resolved',
      () => 'rejected',
    ),
  ).toBe('rejected');
  const getsAtFence = store.stats().requests.get;
  for (let elapsedMs = 0; elapsedMs < AFTER_FENCE_MS; elapsedMs += config.retry.capMs) {
    clock.advance(config.retry.capMs);
    await settle();
  }
  // At most the read already under way at the fence; none after it.
  expect(store.stats().requests.get - getsAtFence).toBeLessThanOrEqual(1);
});
