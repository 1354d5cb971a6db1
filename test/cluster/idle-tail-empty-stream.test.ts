// Found by the review of the late fixes (issue 11), fixed. Review of the late fixes (issue 11), src/cluster/stream-tails.ts FLOOR_CHECK_IDLE_MS.
// A follower tailing its leader's stream before the leader wrote anything (a new writer epoch on a
// quiet partition: no appends, so no WAL object) is caught up and behind nobody. The idle floor
// check LISTs the empty stream after FLOOR_CHECK_IDLE_MS, and #checkFloor reads "nothing is left"
// (listed.size === 0) as "GC took the tail's object": every member "fell behind the floor" and is
// re-followed from scratch, again every FLOOR_CHECK_IDLE_MS for as long as the partition is quiet.
// Nothing was ever collected here; the follower must stay on its tail. Mechanism: stream-tails.ts
// #checkFloorWhenBehind (line ~266, the idle branch) -> #checkFloor, whose `listed.size > 0 &&` (line ~281)
// expels on an empty LIST. In a cluster, fellBehindFloor is partition-host.ts #followAgain:
// releasePartition and a rebuild from the tier, every 30 s per quiet partition on a new writer epoch
// (passed at 8c03420: before, only a member behind the leader's HW made a tail LIST). Severity: medium
// (churn, a follower out of its tail while it rebuilds; with min.insync = RF acks=all waits on it).
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { FLOOR_CHECK_IDLE_MS, type FollowedPartition, StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { settle } from '../support/settle.ts';

setDefaultTimeout(20_000);

const STREAM: StreamId = { writerId: 'leader', epoch: 0 };
/** Steps of manual time the test lets pass (ms each). */
const STEP_MS = 50;

const opened: PartitionLog[] = [];
let tails: StreamTails | null = null;
afterEach(async () => {
  tails?.stopAll();
  for (const log of opened.splice(0)) await log.close();
});

test('a caught-up follower of a stream its leader has not written yet is not expelled by the idle floor check', async () => {
  const store = new MemoryStore(); // the leader's stream: no object yet
  const log = PartitionLog.open(tempDir());
  opened.push(log);
  const follower: FollowedPartition = { topic: 't', topicId: idOf('t'), partition: 0, log, applied: () => {}, leaderHighWatermark: () => log.logEndOffset };
  const fellBehind: string[] = [];
  const clock = new ManualClock();
  tails = new StreamTails({
    store,
    prefix: 'p',
    clock,
    random: new SeededRandom(2),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async () => [STREAM],
    fellBehindFloor: (topic, partition) => fellBehind.push(`${topic}-${partition}`),
  });
  tails.follow(follower, [STREAM]);
  for (let waited = 0; waited <= 2 * FLOOR_CHECK_IDLE_MS && fellBehind.length === 0; waited += STEP_MS) {
    clock.advance(STEP_MS);
    await settle();
  }
  expect(fellBehind).toEqual([]);
});
