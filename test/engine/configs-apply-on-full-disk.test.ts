// Sim seed 120459: a broker whose disk was full could not write its topic registry when the
// cluster's record changed a topic's message.timestamp.type, and its partitions went on appending
// by the configs before until a scan after the disk had room again: records acknowledged after the
// alter read back as CreateTime. In managed mode the registry is a cache: the partitions take the
// configs first, and the refused write only makes the next scan hand them over again.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

/** Room left on the disk: less than the topic registry's rewrite needs. */
const ROOM_BYTES = 16;

test("a managed engine whose disk refuses the registry's write still stamps LogAppendTime once the cluster's configs say so", async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({ directory: '/data', disk, clock: new ManualClock(1_000_000), cluster: managedBy(), log: { flush: { kind: 'none' } } });
  try {
    await engine.adoptPartition('t', idOf('t', 0), 0, 1, async () => {});
    disk.setCapacity(disk.usedBytes + ROOM_BYTES);
    expect(() => engine.applyTopicConfigs('t', { 'message.timestamp.type': 'LogAppendTime' })).toThrow(/ENOSPC/);
    disk.setCapacity(Number.POSITIVE_INFINITY); // room again, before any scan handed the configs over again
    await engine.produce('t', [{ value: 'after the alter', timestamp: 5 }], { partition: 0, acks: 1 });
    const [batch] = engine.fetch('t', 0, 0).batches;
    expect(batch!.timestampType).toBe('LogAppendTime');
  } finally {
    await engine.close();
  }
});
