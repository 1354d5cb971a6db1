// Review of the storage hand-off (src/log/storage-probe.ts, [C1] storageFailing): a broker whose
// log writes fail says so in its broker record until a write succeeds, and each of its scans
// probes the disk. The probe writes one page; a disk with a page of room left, but not room for
// the batches that failed, answers the probe, ends the failure spell, and the next renewal drops
// the flag: no one takes over, and acks=all on what the broker leads fails for the whole spell
// (simulation seeds 5401, 6118, 9279, 18225's bug, back on a disk that is full but for a page).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { STORAGE_PROBE_BYTES } from '../../src/log/storage-probe.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

/** A record far bigger than the probe's page. */
const BIG_RECORD_BYTES = 16 * STORAGE_PROBE_BYTES;

test('a probe does not end a failure spell while writes the size of those that failed still fail', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({ directory: '/data', disk, clock: new ManualClock(), cluster: managedBy(), log: { flush: { kind: 'none' } } });
  try {
    await engine.adoptPartition('t', idOf('t', 0), 0, 1, async () => {});
    await engine.produce('t', [{ value: 'a' }], { partition: 0 });
    disk.setCapacity(disk.usedBytes + 2 * STORAGE_PROBE_BYTES); // room for a probe page, not for the big record
    const big = 'x'.repeat(BIG_RECORD_BYTES);
    expect(
      await engine.produce('t', [{ value: big }], { partition: 0 }).then(
        () => 'ok',
        (error: unknown) => String(error),
      ),
    ).toContain('ENOSPC');
    expect(engine.storageFailing).toBe(true);

    expect(engine.recheckStorage()).toBe(true); // still failing: the write that failed would fail again
    expect(engine.storageFailing).toBe(true);
    expect(
      await engine.produce('t', [{ value: big }], { partition: 0 }).then(
        () => 'ok',
        (error: unknown) => String(error),
      ),
    ).toContain('ENOSPC');

    disk.setCapacity(Number.POSITIVE_INFINITY);
    expect(engine.recheckStorage()).toBe(false); // room again: the spell ends
    expect(engine.storageFailing).toBe(false);
  } finally {
    await engine.close();
  }
});
