// Review finding (issue 24, MEDIUM: acknowledged records silently unreachable, and a client reads
// another broker's records under its topic's name): two single brokers that shared one bucket before
// issue 24 (each its own --node-id and writer id, as test/tier/sweep-only-own-deletions.test.ts
// has them) each had their own topic `orders`. Now each is a cluster of one over the same control
// root, so the second to start migrates into records the first wrote: migrateTopic finds
// `topics/orders` standing (the first broker's incarnation) and returns without a word. The
// second broker's `orders` and every record acknowledged in it are served by no one, and its
// clients read the first broker's `orders` instead. A migration that cannot place a topic must say
// so and stop, not drop it.
import { expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { Ferry } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

async function oldLoneDirectory(wal: MemoryStore, nodeId: number, value: string): Promise<string> {
  const directory = tempDir();
  const engine = await Ferry.open({ directory, wal: { store: wal, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } });
  engine.createTopic('orders', { partitions: 1 });
  await engine.produce('orders', [{ value }], { acks: 'all' });
  await engine.close();
  return directory;
}

test("a migration whose topic name another broker's incarnation holds refuses to start instead of dropping the topic", async () => {
  const wal = new MemoryStore();
  const first = await oldLoneDirectory(wal, 1, 'first broker');
  const second = await oldLoneDirectory(wal, 2, 'second broker');
  const options = (nodeId: number, directory: string) => ({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    engine: { directory, wal: { store: wal, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } } },
  });
  const a = await Broker.start(options(1, first));
  try {
    let b: Broker | null = null;
    const started = Broker.start(options(2, second)).then((broker) => {
      b = broker;
    });
    await expect(started).rejects.toThrow(/orders/);
    await (b as Broker | null)?.stop();
  } finally {
    await a.stop();
  }
});
