// Review of issue 9 finding 11: a tail that is at a seal reads the partition's chain; a partition
// unfollowed (or the tails stopped, the broker shutting down) while that read is in flight must
// stay unfollowed. Otherwise a new tail starts on the next stream for a partition nobody follows
// any more, and polls the store for ever (its log closed, every apply fails and is retried).
import { expect, test } from 'bun:test';
import { StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

for (const how of ['unfollow', 'stopAll'] as const) {
  test(`a partition let go of (${how}) while its tail reads the chain at a seal is not moved on to the next stream: no tail keeps polling`, async () => {
    const store = new MemoryStore();
    const clock = new ManualClock();
    const a: StreamId = { writerId: 'a', epoch: 0 };
    const b: StreamId = { writerId: 'b', epoch: 0 };
    let chainAsked = false;
    let answerChain: (chain: StreamId[]) => void = () => {};
    const readChain = () => {
      chainAsked = true;
      return new Promise<StreamId[]>((resolve) => (answerChain = resolve));
    };
    const tails = new StreamTails({ store, prefix: 'p', clock, random: new SeededRandom(4), pollIntervalMs: 10, pollIntervalMaxMs: 100, readChain });
    const source = PartitionLog.open(tempDir());
    const follower = PartitionLog.open(tempDir());
    const leader = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 1, prefix: 'p', stream: a }, { clock: systemClock, random: new SeededRandom(1) });
    leader.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: Uint8Array.from(source.append(batchOf('r'), 0).batches[0]!.bytes) });
    await leader.flush();
    await sealStream(store, 'p', a, { writerId: 'b', nowMs: 0 });
    tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log: follower, applied: () => {} }, [a]);
    // advance(0) runs the tail's turns between objects (clock.immediate: a ManualClock's are timers due now)
    await until(() => (clock.advance(0), chainAsked), 'the tail to reach the seal and read the chain');
    expect(follower.logEndOffset).toBe(1);
    if (how === 'unfollow') tails.unfollow('t', 0);
    else tails.stopAll();
    await follower.close(); // what the broker does next: the engine releases the partition
    answerChain([a, b]); // the chain read in flight answers: b leads now
    for (let i = 0; i < 20; i++) await Bun.sleep(0);
    const gets = store.stats().requests.get;
    for (let i = 0; i < 20; i++) {
      clock.advance(10_000);
      await Bun.sleep(1);
    }
    expect({ how, getsAfterLettingGo: store.stats().requests.get - gets }).toEqual({ how, getsAfterLettingGo: 0 });
    tails.stopAll();
    await source.close();
  });
}
