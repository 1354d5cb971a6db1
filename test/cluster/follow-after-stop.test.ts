// Review of issue 9 findings 6 and 11: a broker stopping while a scan is still rebuilding a partition
// it is about to follow (ClusterNode's follow callback finishes after stop) must not start
// reporting or tailing it: LeaderProgress.close and StreamTails.stopAll are final, or a reporter
// connects to the leader and a tail polls the store after the broker stopped, for ever.
import { expect, test } from 'bun:test';
import { type LeaderAddress, LeaderProgress } from '../../src/cluster/leader-progress.ts';
import { StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

test('a partition followed after LeaderProgress.close reports to nobody (no reporter, no connection)', () => {
  const leader: LeaderAddress = { nodeId: 1, host: '127.0.0.1', port: 9001 };
  const made: number[] = [];
  const progress = new LeaderProgress({
    replicaId: 2,
    clock: new ManualClock(),
    leaderOf: () => leader,
    leaderHighWatermark: () => {},
    leaderLogStart: () => {},
    reporter: (_replicaId, to) => {
      made.push(to.nodeId);
      return { report: () => {}, forget: () => {}, close: () => {} };
    },
  });
  progress.close(); // the broker stopped
  progress.follow(
    't',
    0,
    () => 0,
    () => 0,
    () => 0,
  ); // a follow that was in flight completes
  progress.applied('t', 0);
  expect({ reportersMade: made.length, reportingTo: progress.reportingTo('t', 0) }).toEqual({ reportersMade: 0, reportingTo: null });
});

test('a partition followed after StreamTails.stopAll starts no tail (the store is not polled after stop)', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const tails = new StreamTails({ store, prefix: 'p', clock, random: new SeededRandom(5), pollIntervalMs: 10, pollIntervalMaxMs: 100, readChain: async () => [] });
  tails.stopAll(); // the broker stopped
  const log = PartitionLog.open(tempDir());
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log, applied: () => {} }, [{ writerId: 'a', epoch: 0 }]);
  for (let i = 0; i < 10; i++) {
    clock.advance(1000);
    await Bun.sleep(1);
  }
  expect(store.stats().requests.get).toBe(0);
  tails.stopAll();
  await log.close();
});
