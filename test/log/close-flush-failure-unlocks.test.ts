// A log whose close could not flush (a failed fdatasync, ENOSPC) threw before it released its
// directory lock: the directory stayed locked for the life of the process, and every later open
// of that partition here failed with "in use by another Ferry log". The close still closes, then
// throws what the flush met.
import { expect, test } from 'bun:test';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { batchOf } from '../support/batches.ts';

/** Group commit that never flushes on its own within the test: the close has to. */
const UNFLUSHED = { flush: { kind: 'group', bytes: 1 << 30, ms: 3_600_000 } } as const;

test('a close whose flush fails still releases the log directory', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const options = { config: UNFLUSHED, clock: new ManualClock(), disk };
  const log = PartitionLog.open('/data/t-0', options);
  log.append(batchOf('a'), 0); // written, not synced yet
  disk.failNextSyncs(1, 'EIO');
  expect(
    await log.close().then(
      () => 'closed',
      (error: unknown) => String(error),
    ),
  ).toContain('EIO');

  const again = PartitionLog.open('/data/t-0', options); // threw Locked: the lock was never released
  await again.close();
});
