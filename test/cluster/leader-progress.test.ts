// Finding 6 of issue 9: a follower's progress reports follow the partition's leadership.
import { expect, test } from 'bun:test';
import { type LeaderAddress, LeaderProgress } from '../../src/cluster/leader-progress.ts';
import { RegisteredAddresses } from '../../src/cluster/replica-address.ts';
import { ManualClock } from '../../src/util/clock.ts';

interface FakeReporter {
  readonly leader: number;
  readonly reports: string[];
  closed: boolean;
  answer(topic: string, partition: number, highWatermark: number): void;
}

function harness() {
  const leaders = new Map<string, LeaderAddress | null>();
  const reporters: FakeReporter[] = [];
  const learnt: string[] = [];
  const progress = new LeaderProgress({
    replicaId: 3,
    clock: new ManualClock(),
    leaderOf: (topic, partition) => leaders.get(`${topic}/${partition}`) ?? null,
    leaderHighWatermark: (topic, partition, hw) => learnt.push(`${topic}/${partition}@${hw}`),
    leaderLogStart: () => {},
    reporter: (_replicaId, leader, highWatermark) => {
      const fake: FakeReporter = { leader: leader.nodeId, reports: [], closed: false, answer: highWatermark };
      reporters.push(fake);
      return {
        report: (t, p, end, epoch) => void fake.reports.push(epoch === 0 ? `${t}/${p}@${end}` : `${t}/${p}@${end} e${epoch}`),
        forget: (t, p) => void fake.reports.push(`forget ${t}/${p}`),
        close: () => void (fake.closed = true),
      };
    },
  });
  return { leaders, reporters, learnt, progress };
}

const broker = (nodeId: number): LeaderAddress => ({ nodeId, host: '127.0.0.1', port: 9000 + nodeId });

test("a followed partition's reports move to its new leader after a scan, with its log end at once; one reporter per leader", () => {
  const { leaders, reporters, learnt, progress } = harness();
  let end = 5;
  leaders.set('t/0', broker(1));
  leaders.set('t/1', broker(1));
  progress.follow(
    't',
    0,
    () => end,
    () => 0,
    () => 0,
  );
  progress.follow(
    't',
    1,
    () => 2,
    () => 0,
    () => 0,
  );
  expect(reporters.map((r) => [r.leader, r.reports])).toEqual([[1, ['t/0@5', 't/1@2']]]);
  end = 6;
  progress.applied('t', 0);
  expect(reporters[0]!.reports.at(-1)).toBe('t/0@6');

  leaders.set('t/0', broker(2)); // broker 1 died; broker 2 took t/0 over, t/1 is unchanged
  progress.retarget();
  expect(reporters.map((r) => r.leader)).toEqual([1, 2]);
  expect(reporters[1]!.reports).toEqual(['t/0@6']);
  expect(reporters[0]!.reports.at(-1)).toBe('forget t/0');
  expect(progress.reportingTo('t', 0)).toBe('2@127.0.0.1:9002');
  end = 7;
  progress.applied('t', 0);
  expect(reporters[1]!.reports.at(-1)).toBe('t/0@7');

  reporters[0]!.answer('t', 0, 6); // a late answer of the old leader is ignored
  reporters[1]!.answer('t', 0, 7);
  expect(learnt).toEqual(['t/0@7']);

  leaders.set('t/1', null); // no live leader: reports stop, the idle reporter closes
  progress.retarget();
  expect(reporters[0]!.closed).toBe(true);
  expect(progress.unfollowTopic('t')).toEqual([0, 1]);
  expect(reporters[1]!.closed).toBe(true);
});

test('issue 9 finding 5: reports name the epoch followed; a new epoch of the same leader is reported again at once', () => {
  const { leaders, reporters, progress } = harness();
  let epoch = 4;
  leaders.set('t/0', broker(1));
  progress.follow(
    't',
    0,
    () => 5,
    () => epoch,
    () => 0,
  );
  expect(reporters[0]!.reports).toEqual(['t/0@5 e4']);
  progress.retarget(); // nothing changed: nothing re-sent
  expect(reporters[0]!.reports).toEqual(['t/0@5 e4']);
  epoch = 5; // the same broker claimed the partition again ([C7]): a report of epoch 4 would be fenced
  progress.retarget();
  expect(reporters.length).toBe(1);
  expect(reporters[0]!.reports).toEqual(['t/0@5 e4', 't/0@5 e5']);
  progress.applied('t', 0);
  expect(reporters[0]!.reports.at(-1)).toBe('t/0@5 e5');
});

test("replica progress counts only from the broker's registered address", async () => {
  const resolved: string[] = [];
  const addresses = new RegisteredAddresses(new ManualClock(), async (host) => {
    resolved.push(host);
    return host === 'broker-2.internal' ? ['10.0.0.2'] : [];
  });
  expect(await addresses.matches('127.0.0.1', '127.0.0.1')).toBe(true);
  expect(await addresses.matches('::ffff:127.0.0.1', '127.0.0.1')).toBe(true); // dual-stack sockets report IPv4 peers mapped
  expect(await addresses.matches('127.0.0.2', '127.0.0.1')).toBe(false);
  expect(await addresses.matches('10.0.0.2', 'broker-2.internal')).toBe(true);
  expect(await addresses.matches('10.0.0.3', 'broker-2.internal')).toBe(false);
  expect(resolved).toEqual(['broker-2.internal']); // looked up once, then cached
  expect(await addresses.matches('10.0.0.9', 'unknown.internal')).toBe(false);
});
