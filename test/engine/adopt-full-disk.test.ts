// Sim seed 90063: a broker whose disk was full claimed a new partition, failed to adopt it (the
// topic registry's write met ENOSPC before any log write), and claimed it again at every scan,
// a new leader epoch each time: nothing reported the disk failing, so the broker record never said
// storageFailing and no healthy broker took the partition over. An adoption the disk refuses now
// counts as a failed write, as a log's would.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { STORAGE_PROBE_BYTES } from '../../src/log/storage-probe.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

/** Room left on the disk: less than the topic registry's rewrite needs. */
const ROOM_BYTES = 16;
/** Topics enough that the registry's rewrite is several probe pages. */
const REGISTRY_TOPICS = 80;

test('an adoption the full disk refuses leaves the engine storage-failing until a probe finds room', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({ directory: '/data', disk, clock: new ManualClock(), cluster: managedBy(), log: { flush: { kind: 'none' } } });
  try {
    await engine.adoptPartition('t', idOf('t', 0), 0, 1, async () => {});
    disk.setCapacity(disk.usedBytes + ROOM_BYTES);
    const refused = await engine
      .adoptPartition('u', idOf('u', 0), 0, 1, async () => {})
      .then(
        () => 'adopted',
        (error: unknown) => String(error),
      );
    expect(refused).toContain('ENOSPC');
    expect(engine.storageFailing).toBe(true); // the cluster's mayClaim and the broker record read this
    expect(engine.recheckStorage()).toBe(true); // a probe on the full disk fails too

    disk.setCapacity(Number.POSITIVE_INFINITY);
    expect(engine.recheckStorage()).toBe(false);
    await engine.adoptPartition('u', idOf('u', 0), 0, 1, async () => {});
    expect(engine.serves('u', 0)).toBe(true);
  } finally {
    await engine.close();
  }
});

test('a disk with room for a probe page but not for the topic registry stays storage-failing (the probe asks for as much as the registry took)', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({ directory: '/data', disk, clock: new ManualClock(), cluster: managedBy(), log: { flush: { kind: 'none' } } });
  try {
    for (let i = 0; i < REGISTRY_TOPICS; i++) await engine.adoptPartition(`topic-${i}`, idOf(`topic-${i}`, 0), 0, 1, async () => {});
    disk.setCapacity(disk.usedBytes + 2 * STORAGE_PROBE_BYTES);
    const refused = await engine
      .adoptPartition('u', idOf('u', 0), 0, 1, async () => {})
      .then(
        () => 'adopted',
        (error: unknown) => String(error),
      );
    expect(refused).toContain('ENOSPC');
    expect(engine.recheckStorage()).toBe(true); // two pages free: a page-sized probe would have ended the spell
    expect(engine.storageFailing).toBe(true);
  } finally {
    await engine.close();
  }
});
