// [R6] A follower's reports carry its log start; an answer naming a higher one reaches the
// follower; and an idle follower repeats its latest reports every PROGRESS_HEARTBEAT_INTERVAL_MS,
// so a leader's DeleteRecords learns of it without the follower applying anything new.
import { expect, test } from 'bun:test';
import { PROGRESS_HEARTBEAT_INTERVAL_MS, ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { fetchAnswer, listenFakeFetchLeader, type ReceivedFetch } from '../support/fake-fetch-leader.ts';
import { until } from '../support/until.ts';

const LOG_END = 10;
const LEADER_START = 5;
const EPOCH = 3;

test("the answers' log start above the reported one reaches the follower; an idle follower repeats its latest report after a heartbeat's silence", async () => {
  const requests: ReceivedFetch[] = [];
  const server = listenFakeFetchLeader((fetch) => {
    requests.push(fetch);
    fetch.socket.write(fetchAnswer(fetch, () => ({ highWatermark: LOG_END, logStartOffset: LEADER_START })));
  });
  const clock = new ManualClock();
  const learnt: number[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock, highWatermark: () => {}, logStart: (_topic, _partition, start) => learnt.push(start) });
  const reportedStarts = () => requests.map((r) => r.request.topics[0]!.partitions[0]!.logStartOffset);
  try {
    reporter.report('t', 0, LOG_END, EPOCH, 0);
    await until(() => learnt.length === 1, 'the answer naming the leader start');
    expect(learnt).toEqual([LEADER_START]);
    reporter.report('t', 0, LOG_END, EPOCH, LEADER_START); // the follower took it up and says so
    await until(() => requests.length === 2, 'the report of the new start');
    await Bun.sleep(50); // its answer: the start is not above the reported one, so nothing more
    expect({ learnt, reportedStarts: reportedStarts() }).toEqual({ learnt: [LEADER_START], reportedStarts: [0, LEADER_START] });

    clock.advance(PROGRESS_HEARTBEAT_INTERVAL_MS - 1); // both answers covered their reports: silence
    await Bun.sleep(50);
    expect(requests.length).toBe(2);
    clock.advance(1);
    await until(() => requests.length === 3, 'the heartbeat');
    const repeated = requests[2]!.request.topics[0]!.partitions[0]!;
    expect({ fetchOffset: repeated.fetchOffset, logStartOffset: repeated.logStartOffset, epoch: repeated.currentLeaderEpoch }).toEqual({
      fetchOffset: LOG_END,
      logStartOffset: LEADER_START,
      epoch: EPOCH,
    });
    reporter.forget('t', 0); // nothing reported here any more: no heartbeat either
    clock.advance(PROGRESS_HEARTBEAT_INTERVAL_MS * 2);
    await Bun.sleep(50);
    expect(requests.length).toBe(3);
  } finally {
    reporter.close();
    server.stop();
  }
});
