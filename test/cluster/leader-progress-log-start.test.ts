// [R6] A followed partition takes up a log start its leader's answer names, and reports it back at
// once; an answer naming a start it cannot take up yet (its log ends below it) sends nothing, so
// answer and report do not chase each other.
import { expect, test } from 'bun:test';
import { type LeaderAddress, LeaderProgress } from '../../src/cluster/leader-progress.ts';
import { ManualClock } from '../../src/util/clock.ts';

test("a leader's log start from an answer is taken up and reported back once; one the log cannot reach sends nothing", () => {
  const leader: LeaderAddress = { nodeId: 1, host: '127.0.0.1', port: 9001 };
  let logEnd = 10;
  let logStart = 0;
  const reports: string[] = [];
  const takenUp: number[] = [];
  let answerLogStart: (topic: string, partition: number, start: number) => void = () => {};
  const progress = new LeaderProgress({
    replicaId: 2,
    clock: new ManualClock(),
    leaderOf: () => leader,
    leaderHighWatermark: () => {},
    leaderLogStart: (_topic, _partition, start) => {
      takenUp.push(start);
      logStart = Math.min(start, logEnd); // as Ferry.followLogStart: as far as the log reaches
    },
    reporter: (_replicaId, _to, _highWatermark, logStartAnswer) => {
      answerLogStart = logStartAnswer;
      return { report: (t, p, end, _epoch, start) => void reports.push(`${t}/${p}@${end} from ${start}`), forget: () => {}, close: () => {} };
    },
  });
  progress.follow(
    't',
    0,
    () => logEnd,
    () => 0,
    () => logStart,
  );
  expect(reports).toEqual(['t/0@10 from 0']);
  answerLogStart('t', 0, 5);
  expect({ takenUp, reports }).toEqual({ takenUp: [5], reports: ['t/0@10 from 0', 't/0@10 from 5'] });
  answerLogStart('t', 0, 5); // the answer to that report: nothing new
  expect(reports.length).toBe(2);
  answerLogStart('t', 0, 12); // past the log end: the start stops there (10), reported once
  answerLogStart('t', 0, 12);
  expect({ takenUp, reports: reports.slice(2) }).toEqual({ takenUp: [5, 12, 12], reports: ['t/0@10 from 10'] });
  progress.logStartMoved('t', 0); // a scan read the record's start, already taken up: nothing to say
  expect(reports.length).toBe(3);
  logEnd = 20; // the tail brought more (reported as applied), and a scan then moved the start to the record's
  progress.applied('t', 0);
  logStart = 12;
  progress.logStartMoved('t', 0);
  expect(reports.slice(3)).toEqual(['t/0@20 from 10', 't/0@20 from 12']);
});
