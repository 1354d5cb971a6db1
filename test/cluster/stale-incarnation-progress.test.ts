// Issue 9 finding 5, review: a follower reports its progress to the leader by topic NAME (the
// replica Fetch v11 carries no topic id). A follower that has not yet seen a topic deleted and
// created again still reports its log end of the old incarnation, and its reporter repeats an
// unconfirmed report every PROGRESS_REPEAT_INTERVAL_MS. Once the new incarnation's log reaches
// that offset, the leader counts the old incarnation's report as the follower holding the new
// records, and acks=all with min.insync.replicas 2 is acknowledged while the new incarnation is on
// the leader alone (docs/cluster-protocol.md R2, R5; docs/design.md contract 10).
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(90_000);

const brokers: Broker[] = [];
const reporters: ProgressReporter[] = [];
let openTopicLists = () => {};

afterEach(async () => {
  openTopicLists();
  for (const reporter of reporters.splice(0)) reporter.close();
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

/** The shared store as one broker sees it: its listings of topic records can be frozen, so its scans stop before they see a delete. */
function freezableTopicLists(inner: ObjectStore): { store: ObjectStore; freeze(): void; open(): void } {
  let gate: Promise<void> | null = null;
  let release = () => {};
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'list') {
        return async (prefix: string, options?: object) => {
          while (gate !== null && prefix.startsWith('control/topics/')) await gate;
          return target.list(prefix, options as never);
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return {
    store,
    freeze: () => void (gate ??= new Promise<void>((resolve) => (release = resolve))),
    open: () => {
      gate = null;
      release();
    },
  };
}

test('a follower still on the old incarnation of a re-created topic does not count toward min.insync.replicas of the new one', async () => {
  const shared = new MemoryStore();
  const views = [1, 2].map(() => freezableTopicLists(shared));
  openTopicLists = () => views.forEach((view) => view.open());
  for (const [at, view] of views.entries()) {
    const nodeId = at + 1;
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        minInsyncReplicas: 2,
        cluster: { store: view.store, leaseMs: 3000, scanIntervalMs: 50 },
        engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store: view.store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  await brokers[0]!.context.topology.createTopic('inc', 1, 2);
  let leader!: Broker;
  let follower!: Broker;
  await until(() => {
    leader = brokers.find((b) => b.context.engine.leads('inc', 0))!;
    follower = brokers.find((b) => b !== leader && b.context.engine.serves('inc', 0))!;
    return leader !== undefined && follower !== undefined;
  }, 'a leader and a follower of the first incarnation');
  const followerId = brokers.indexOf(follower) + 1;
  const kafka = new Kafka({ clientId: 'stale-progress', brokers: [`127.0.0.1:${leader.port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 } });
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  await producer.send({ topic: 'inc', acks: -1, messages: Array.from({ length: 5 }, (_, i) => ({ value: `old-${i}` })) });
  await until(() => follower.context.engine.logEndOffset('inc', 0) === 5, 'the follower to hold the five old records');

  // The follower's scans stop before they see the delete: it goes on following the old incarnation.
  views[brokers.indexOf(follower)]!.freeze();
  await Bun.sleep(200); // any scan under way has listed the topics
  await leader.context.topology.deleteTopic('inc');
  expect(await leader.context.topology.createTopic('inc', 1, 2)).toBe(true);
  await until(() => leader.context.engine.leads('inc', 0) && leader.context.engine.logEndOffset('inc', 0) === 0, 'the leader to serve the new incarnation');
  expect(follower.context.engine.logEndOffset('inc', 0)).toBe(5); // still the old incarnation there
  // Leader epochs rise across incarnations of the name [L4]: the new one starts above every epoch of the old.
  const oldEpoch = follower.context.engine.leaderEpoch('inc', 0);
  expect(leader.context.engine.leaderEpoch('inc', 0)).toBeGreaterThan(oldEpoch);

  // What the follower's reporter sends for the old incarnation, repeated while unconfirmed: its log end, by name, in the epoch it follows.
  const stale = new ProgressReporter(followerId, '127.0.0.1', leader.port, { clock: systemClock, highWatermark: () => {} });
  reporters.push(stale);
  stale.report('inc', 0, 5, oldEpoch);

  // Five new records, on the leader alone: acks=all must wait for a second replica of THIS incarnation.
  const outcome = await producer.send({ topic: 'inc', acks: -1, timeout: 3000, messages: Array.from({ length: 5 }, (_, i) => ({ value: `new-${i}` })) }).then(
    () => 'acknowledged',
    (error: unknown) => String(error),
  );
  await producer.disconnect();
  expect(follower.context.engine.logEndOffset('inc', 0)).toBe(5); // the follower never saw a record of the new incarnation
  expect(outcome).not.toBe('acknowledged');
  expect(leader.context.engine.fetch('inc', 0, 0, { maxBytes: 0 }).highWatermark).toBe(0);
});
