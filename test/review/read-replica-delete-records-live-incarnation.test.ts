// Review finding (issue 24, DI1, HIGH: acknowledged records lost): a lone engine's deleteTopic
// writes the deletion record `deleted-topics/<topicId>` (src/engine/engine.ts #recordDeletion) for
// every engine that is not managed, a read replica (`follow`) included. A read replica is not the
// topic's owner: its delete only drops its local copy, while the leader goes on serving the same
// incarnation. With the tier's control store shared (as a replica needs, to read the tier), the
// record lands beside the leader's tier records, and DI1 makes it a licence: the leader's WAL GC
// takes every frame of the live incarnation, tiered or not (GI1's "deletion record" arm), and its
// tier sweeper takes the tiered history. Here: 20 records acknowledged with acks=all, never tiered,
// and the leader's next GC pass deletes the WAL objects holding them.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { DeletedIncarnations } from '../../src/tier/deleted-incarnations.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const DRIVEN_BY_THE_TEST_MS = 3_600_000;
const RECORDS = 20;

function endOf(replica: Engine): number {
  try {
    return replica.logEndOffset('events', 0);
  } catch {
    return -1;
  }
}

test("a read replica's delete of its copy of a topic never lets the leader's GC take the live topic's frames", async () => {
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const control = new ControlStore(tier, '');
  const leader = await Engine.open({
    directory: tempDir(),
    wal: { store: wal, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier, control, intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
  });
  const topic = leader.createTopic('events', { partitions: 1 });
  for (let i = 0; i < RECORDS; i++) await leader.produce('events', [{ value: `record ${i}` }], { acks: 'all' });

  const replica = await Engine.open({ directory: tempDir(), follow: { store: wal, writerId: 'w' }, tier: { store: tier, control, intervalMs: DRIVEN_BY_THE_TEST_MS } });
  await until(() => endOf(replica) === RECORDS, 'the replica to catch up');
  await replica.deleteTopic('events'); // the replica lets go of its copy
  await replica.close();

  expect(leader.logEndOffset('events', 0)).toBe(RECORDS); // the leader still serves the incarnation
  expect(await new DeletedIncarnations(control).isDeleted(topic.id)).toBe(false);
  const objectsBefore = (await wal.list('wal/w/')).objects.length;
  await leader.walCollector!.collect();
  expect((await wal.list('wal/w/')).objects.length).toBe(objectsBefore);
  await leader.close();
}, 30_000);
