// ST4 (src/partition/stream-tail.ts): a leader's hints to its linked replicas carry its durable
// end, and the replica's tail does not probe past it: at the tail, each object costs its GET, not
// its GET and a 404 for the next one (two in three of a follower's GETs were 404s at 10 MB/s,
// issue 28).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const PRODUCES = 40;

test('a hinted replica reads each durable object once and probes no object not written yet while hints flow', async () => {
  const store = new MemoryStore();
  const log = { flush: { kind: 'none' } } as const;
  const leader = await Engine.open({ directory: tempDir(), log, wal: { store, writerId: 'leader', config: { uploadIntervalMs: 1 } } });
  const replica = await Engine.open({ directory: tempDir(), log, follow: { store, writerId: 'leader' } });
  try {
    leader.createTopic('t', { partitions: 1 });
    leader.attachReplica(replica, 'replica');
    await leader.produce('t', [{ value: 'warm' }], { partition: 0, acks: 1 });
    await until(() => replica.topics().some((topic) => topic.name === 't') && replica.offsetFor('t', 0, -1).offset === 1, 'the replica to follow', 10_000);
    const before = store.stats();
    for (let produce = 0; produce < PRODUCES; produce++) {
      const [record] = await leader.produce('t', [{ value: `v${produce}` }], { partition: 0, acks: 1 });
      await leader.wal!.flush(); // durable: the hint names it
      await until(() => replica.offsetFor('t', 0, -1).offset > record!.offset, `offset ${record!.offset} on the replica`, 10_000);
    }
    const after = store.stats();
    const gets = after.requests.get - before.requests.get;
    const notFound = (after.errors.NotFound ?? 0) - (before.errors.NotFound ?? 0);
    expect(gets - notFound).toBeGreaterThanOrEqual(PRODUCES); // each produce's object read
    // Before ST4 the tail probed the next sequence after each object (about one 404 per object);
    // now only after an idle wait with no hint (the fallback when hints stop).
    expect(notFound).toBeLessThan(PRODUCES / 4);
  } finally {
    await replica.close();
    await leader.close();
  }
});
