// A topic delete that cannot write the topic registry (a full disk) must not lose the partitions
// it was letting go of: their logs stay open and locked, and a log no one holds any more can never
// be closed, so its directory stays locked for the life of the process. Found by the simulation
// (seed 218): a broker whose disk filled while a topic was deleted and created again could adopt
// none of the new incarnation's partitions for 25 s ("in use by another Ferry log").
import { expect, test } from 'bun:test';
import { Ferry } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { idOf } from '../support/topic-ids.ts';

const DIRECTORY = '/ferry/data';

async function managedEngine(disk: SimDisk): Promise<Ferry> {
  return Ferry.open({ directory: DIRECTORY, disk, managedPartitions: true, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'b1', config: { uploadIntervalMs: 1 } } });
}

test('a delete that cannot write the registry changes nothing: the partitions are still served, and go once there is room', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const ferry = await managedEngine(disk);
  await ferry.adoptPartition('t', idOf('t'), 0, 2, async () => {});
  await ferry.adoptPartition('t', idOf('t'), 1, 2, async () => {}, 'follower');
  disk.setCapacity(disk.usedBytes); // full
  const failed = await ferry.deleteTopic('t').then(() => null, (error: unknown) => error);
  expect((failed as NodeJS.ErrnoException | null)?.code).toBe('ENOSPC');
  expect(ferry.serves('t', 0)).toBe(true);
  expect(ferry.serves('t', 1)).toBe(true);
  disk.setCapacity(Number.POSITIVE_INFINITY);
  await ferry.deleteTopic('t');
  expect(ferry.serves('t', 0)).toBe(false);
  // the directories are free again: the next incarnation is adopted under the same names
  await ferry.adoptPartition('t', idOf('t', 1), 0, 2, async () => {});
  await ferry.adoptPartition('t', idOf('t', 1), 1, 2, async () => {}, 'follower');
  expect(ferry.serves('t', 0) && ferry.serves('t', 1)).toBe(true);
  await ferry.close();
});

test('releasing a topic lets go of every partition of it served here, registry or not (a cluster forgetting a deleted topic on a full disk)', async () => {
  const disk = new SimDisk({ random: new SeededRandom(2) });
  const ferry = await managedEngine(disk);
  await ferry.adoptPartition('t', idOf('t'), 0, 3, async () => {});
  await ferry.adoptPartition('t', idOf('t'), 2, 3, async () => {}, 'follower');
  disk.setCapacity(disk.usedBytes); // full: the delete fails, releasing does not need the disk
  await ferry.deleteTopic('t').catch(() => {});
  await ferry.releaseTopic('t');
  expect(ferry.serves('t', 0) || ferry.serves('t', 2)).toBe(false);
  const whileFull = await ferry.adoptPartition('t', idOf('t', 1), 0, 3, async () => {}).then(() => null, (error: unknown) => error);
  expect(isFerryError(whileFull, 'Locked')).toBe(false); // fails for want of room (the registry), never for a lock
  disk.setCapacity(Number.POSITIVE_INFINITY);
  await ferry.adoptPartition('t', idOf('t', 1), 0, 3, async () => {});
  await ferry.adoptPartition('t', idOf('t', 1), 2, 3, async () => {}, 'follower');
  expect(ferry.serves('t', 0) && ferry.serves('t', 2)).toBe(true);
  await ferry.close();
});
