// [K7] One scan's adoptions run inside adoptTogether (PartitionHost keeps the rebuilds' WAL reads
// for all of them there): every adoption of a dead broker's partitions starts and ends inside one
// such call, however the pool paces them, ADOPTIONS_IN_FLIGHT at a time ([K4]).
import { expect, test } from 'bun:test';
import { ADOPTIONS_IN_FLIGHT } from '../../src/cluster/partition-claims.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

const PARTITIONS = 3 * ADOPTIONS_IN_FLIGHT + 1;

test("a takeover of a dead broker's partitions adopts them all inside one adoptTogether of its scan", async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  let together = 0;
  let batches = 0;
  const adoptedInside: boolean[] = [];
  const make = (nodeId: number) =>
    testClusterNode({
      store,
      clock,
      nodeId,
      scanIntervalMs: 100_000,
      adopt: async () => {
        const inside = together > 0;
        await Bun.sleep(1); // the pool has more to start than room: later adoptions wait for earlier ones to end
        adoptedInside.push(inside && together > 0);
      },
      async adoptTogether(adoptions) {
        together++;
        batches++;
        try {
          return await adoptions();
        } finally {
          together--;
        }
      },
    });
  const a = make(1);
  await a.start();
  await a.createTopic('t', PARTITIONS);
  await a.scan(); // broker 1 leads every partition
  a.stop(); // and dies
  const b = make(2);
  await b.start();
  clock.advance(1100);
  adoptedInside.length = 0;
  batches = 0;
  await b.scan(); // claims and adopts all of them
  expect(adoptedInside).toEqual(Array.from({ length: PARTITIONS }, () => true));
  expect(batches).toBe(1);
  b.stop();
});
