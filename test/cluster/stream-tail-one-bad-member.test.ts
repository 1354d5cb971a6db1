// Review of issue 9 finding 11: one tail feeds every partition this broker follows from a leader
// stream. A frame that one partition cannot apply (here a gap: its log ends before the frame;
// in practice any per-partition fault, e.g. a chain that does not match the stream) fails the
// whole step, which is retried for ever: every other partition of that leader stops replicating on
// this broker, and with min.insync.replicas = replication factor their acks=all stall with it.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

setDefaultTimeout(30_000);

test('a partition whose frame does not fit its log does not stop the other partitions of the same tail', async () => {
  const store = new MemoryStore();
  const a: StreamId = { writerId: 'a', epoch: 0 };
  const reports: string[] = [];
  const tails = new StreamTails({
    store,
    prefix: 'p',
    clock: systemClock,
    random: new SeededRandom(6),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async () => [a],
    report: (m) => reports.push(m),
  });
  const sources = [PartitionLog.open(tempDir()), PartitionLog.open(tempDir())];
  const followers = [PartitionLog.open(tempDir()), PartitionLog.open(tempDir())];
  const leader = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 1, prefix: 'p', stream: a }, { clock: systemClock, random: new SeededRandom(1) });
  const ship = async (partition: number) => {
    const at = sources[partition]!.logEndOffset;
    const data = Uint8Array.from(sources[partition]!.append(batchOf(`p${partition}-${at}`), 0).batches[0]!.bytes);
    leader.append({ topic: 't', topicId: idOf('t'), partition, leaderEpoch: 0, baseOffset: at, lastOffset: at, data });
    await leader.flush();
  };
  for (let i = 0; i < 5; i++) sources[1]!.append(batchOf(`before-${i}`), 0); // partition 1's stream part starts at 5: its empty follower has a gap
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log: followers[0]!, applied: () => {} }, [a]);
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 1, log: followers[1]!, applied: () => {} }, [a]);
  await ship(1);
  for (let i = 0; i < 3; i++) await ship(0);
  const deadline = performance.now() + 5000;
  while (followers[0]!.logEndOffset < 3 && performance.now() < deadline) await Bun.sleep(5);
  expect({ partition0: followers[0]!.logEndOffset, partition1: followers[1]!.logEndOffset }).toEqual({ partition0: 3, partition1: 0 });
  expect(reports.some((m) => m.includes('t-1'))).toBe(true); // the broken partition is reported
  tails.stopAll();
  for (const log of [...sources, ...followers]) await log.close();
});
