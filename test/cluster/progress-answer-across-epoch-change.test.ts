// Review finding ([R1]-[R3]): a progress report answered after the follower moved to a new leader
// epoch of the same leader (it claimed the partition again, [C7]). The answer to the old epoch's
// report (counted by the leader while it still served that epoch) reached the follower after the
// report in the new epoch was sent, and was taken as confirming it: the new epoch's report was
// dropped from the repeats, so when the leader answered it UNKNOWN_LEADER_EPOCH (it had not adopted
// the new epoch yet) nothing was sent again, and the leader never heard of the follower in its new
// leadership (acks=all with min.insync.replicas > 1 waits on the follower's next applied object).
import { expect, test } from 'bun:test';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { PROGRESS_REPEAT_INTERVAL_MS, ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { fetchAnswer, listenFakeFetchLeader, type ReceivedFetch } from '../support/fake-fetch-leader.ts';
import { until } from '../support/until.ts';

const OLD_EPOCH = 5;
const NEW_EPOCH = 6;
const LOG_END = 7;

test('an answer to the old epoch arriving after the report in the new one does not stop that report repeating', async () => {
  const requests: ReceivedFetch[] = [];
  let held: Uint8Array | null = null;
  const server = listenFakeFetchLeader((fetch) => {
    requests.push(fetch);
    const epoch = fetch.request.topics[0]!.partitions[0]!.currentLeaderEpoch;
    if (requests.length === 1) {
      // The leader, still in the old epoch, counts it; its answer is slow to arrive.
      held = fetchAnswer(fetch, () => ({ highWatermark: LOG_END }));
    } else if (requests.length === 2) {
      // The new epoch's report overtakes it; the leader has not adopted that epoch yet.
      expect(epoch).toBe(NEW_EPOCH);
      // One write: the follower reads both answers in one go, the old epoch's first.
      fetch.socket.write(Buffer.concat([held!, fetchAnswer(fetch, (topic) => (topic === 't' ? { errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, highWatermark: -1 } : { highWatermark: LOG_END }))]));
    } else {
      fetch.socket.write(fetchAnswer(fetch, () => (epoch === NEW_EPOCH ? { highWatermark: LOG_END } : { errorCode: ErrorCode.FENCED_LEADER_EPOCH, highWatermark: -1 })));
    }
  });
  const clock = new ManualClock();
  const heard: string[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock, highWatermark: (topic) => heard.push(topic) });
  try {
    reporter.report('t', 0, LOG_END, OLD_EPOCH);
    await until(() => requests.length === 1, 'the report in the old epoch');
    reporter.report('t', 0, LOG_END, NEW_EPOCH); // the follower's scan saw the leader's claim one epoch up
    reporter.report('u', 0, LOG_END, NEW_EPOCH); // another partition of the same leader, in the same request: its answer shows both were read
    await until(() => requests.length === 2, 'the report in the new epoch');
    await until(() => heard.includes('u'), 'the answers reaching the follower'); // both, read together, the old epoch's first
    // The leader adopts the new epoch; the follower's repeat must reach it in that epoch.
    for (let repeat = 0; repeat < 4 && requests.length < 3; repeat++) {
      clock.advance(PROGRESS_REPEAT_INTERVAL_MS);
      await Bun.sleep(20);
    }
    expect(requests.length).toBeGreaterThanOrEqual(3);
    const repeated = requests[2]!.request.topics.find((t) => t.topic === 't');
    expect(repeated!.partitions[0]!.currentLeaderEpoch).toBe(NEW_EPOCH);
  } finally {
    reporter.close();
    server.stop();
  }
});
