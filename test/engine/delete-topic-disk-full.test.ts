// Found by the simulation (seed 222): a cluster broker forgot a deleted topic (Ferry.deleteTopic)
// while its disk was full. Saving the topic registry failed with ENOSPC after the partitions had
// been dropped from the engine's map, before their logs were closed: the logs stayed open, their
// directories locked, and every later adoption of the topic's next incarnation failed with
// "in use by another Ferry log", so no broker could ever serve those partitions here again.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

const PARTITIONS = 2;

async function adoptAll(engine: Engine, incarnation: number): Promise<void> {
  for (let index = 0; index < PARTITIONS; index++) await engine.adoptPartition('t', idOf('t', incarnation), index, PARTITIONS, async () => {});
}

test('a topic deleted while the disk is full has its logs closed: its next incarnation can be adopted once there is room', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({ directory: '/data', disk, clock: new ManualClock(), cluster: managedBy(), log: { flush: { kind: 'none' } } });
  try {
    await adoptAll(engine, 0);
    await engine.produce('t', [{ value: 'a' }], { partition: 0 });
    disk.setCapacity(disk.usedBytes); // full: the registry's save fails
    expect(
      await engine.deleteTopic('t').then(
        () => 'deleted',
        (error: unknown) => String(error),
      ),
    ).toContain('ENOSPC');
    expect(engine.serves('t', 0)).toBe(false);

    disk.setCapacity(Number.POSITIVE_INFINITY);
    await adoptAll(engine, 1); // threw Locked: the first incarnation's logs were still open
    expect(engine.serves('t', 0) && engine.serves('t', 1)).toBe(true);
    expect(engine.logEndOffset('t', 0)).toBe(0);
    expect(engine.topics().find((topic) => topic.name === 't')?.id).toBe(idOf('t', 1));
  } finally {
    await engine.close();
  }
});
