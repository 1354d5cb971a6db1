// A joiner catches up on a tail's stream CATCH_UP_READS_AHEAD objects at a time: the tail and every
// member wait for their joiners, and one read at a time from the floor held a tail for 3 s and then
// 7 s (sim seed 630391: a follower 559 objects behind joined; the partitions the tail fed kept
// their follower in sync while it applied nothing, and acks=all timed out).
import { afterEach, expect, test } from 'bun:test';
import { CATCH_UP_READS_AHEAD, StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, ObjectStore } from '../../src/store/object-store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { overriding } from '../support/store-override.ts';
import { until } from '../support/until.ts';

const OBJECTS = 3 * CATCH_UP_READS_AHEAD;
/** How long each GET is held: long enough for reads issued together to overlap. */
const GET_HOLD_MS = 5;
/** Time for the member's tail to read the stream to its end (OBJECTS reads, 8 ahead, ~30 ms here). */
const MEMBER_SETTLE_MS = 300;

const closing: PartitionLog[] = [];
afterEach(async () => {
  for (const log of closing.splice(0)) await log.close();
});

/** The store, each GET held GET_HOLD_MS, counting the most under way at once since the last reset. */
function heldGets(inner: MemoryStore): { store: ObjectStore; mostInFlight: () => number; reset(): void } {
  let inFlight = 0;
  let most = 0;
  const get = async (key: string, options?: GetOptions) => {
    most = Math.max(most, ++inFlight);
    try {
      await Bun.sleep(GET_HOLD_MS);
      return await inner.get(key, options);
    } finally {
      inFlight--;
    }
  };
  const store = overriding(inner, 'get', get);
  return { store, mostInFlight: () => most, reset: () => void (most = inFlight) };
}

test('a late joiner catches up with CATCH_UP_READS_AHEAD reads under way, not one at a time', async () => {
  const memory = new MemoryStore();
  const gets = heldGets(memory);
  const stream: StreamId = { writerId: 'a', epoch: 0 };
  const tails = new StreamTails({
    store: gets.store,
    prefix: 'p',
    clock: systemClock,
    random: new SeededRandom(2),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async () => [stream],
  });
  const leaderLog = PartitionLog.open(tempDir());
  const [member, joiner] = [PartitionLog.open(tempDir()), PartitionLog.open(tempDir())];
  closing.push(leaderLog, member, joiner);
  const wal = new WalWriter(memory, { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 1, prefix: 'p', stream }, { clock: systemClock, random: new SeededRandom(1) });
  // One object a flush, each with a frame of partition 1 (the joiner's): OBJECTS objects.
  for (let at = 0; at < OBJECTS; at++) {
    const data = Uint8Array.from(leaderLog.append(batchOf(`r${at}`), 0).batches[0]!.bytes);
    wal.append({ topic: 't', topicId: idOf('t'), partition: 1, leaderEpoch: 0, baseOffset: at, lastOffset: at, data });
    await wal.flush();
  }
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log: member, applied: () => {} }, [stream]);
  await Bun.sleep(MEMBER_SETTLE_MS); // the member's tail reaches the stream's end and polls there, one read at a time
  gets.reset();
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 1, log: joiner, applied: () => {} }, [stream]);
  await until(() => joiner.logEndOffset === OBJECTS, 'the joiner to catch up');
  tails.stopAll();
  expect(gets.mostInFlight()).toBeGreaterThan(CATCH_UP_READS_AHEAD / 2); // 1 or 2 before: one catch-up read at a time, beside a poll
});
