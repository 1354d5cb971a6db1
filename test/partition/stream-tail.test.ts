// One loop follows WAL streams (src/partition/stream-tail.ts); its two users run the same cases
// here: the library read replica (Follower: a writer's epochs, a checkpoint) and a cluster's
// followers (StreamTails: members per leader stream, chains from control records). Where they
// differ by design it is said in the case: at a floor GC passed, the read replica fails with the
// gap (it has no tier here) and the cluster hands the partition back to its host ([D4]).
import { afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { FLOOR_CHECK_IDLE_MS, StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MetricsRegistry } from '../../src/metrics/index.ts';
import { DEFAULT_FOLLOWER_CONFIG, FOLLOWER_FLOOR_CHECK_INTERVAL_MS, Follower } from '../../src/partition/follower.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { type Clock, ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { Uuid } from '../../src/util/uuid.ts';
import { type StreamId, streamPrefix, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { advanceUntil } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(30_000);

const PREFIX = 'p';
const STREAM: StreamId = { writerId: 'leader', epoch: 0 };
const TOPIC_ID = idOf('t');
const POLL = { pollIntervalMs: 1, pollIntervalMaxMs: 32 };
/** Probes of an absent object the backoff case watches: 1, 2, 4 .. 32 ms apart, then 32 ms. */
const PROBES = 10;

/** A store that counts GETs in flight (fetch-ahead) and notes when each key was read. */
class WatchedStore extends MemoryStore {
  inFlight = 0;
  inFlightMax = 0;
  readonly readsMs = new Map<string, number[]>();
  clock: Clock = systemClock;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.readsMs.set(key, [...(this.readsMs.get(key) ?? []), this.clock.monotonicMs()]);
    this.inFlight++;
    this.inFlightMax = Math.max(this.inFlightMax, this.inFlight);
    try {
      return await super.get(key, options);
    } finally {
      this.inFlight--;
    }
  }
}

/** One follower of partition 0 of incarnation `topicId` of topic `t`, as a user of the loop runs it. */
interface Following {
  log(): PartitionLog | undefined;
  /** It gave the partition up at a floor GC passed ([D4]): failed with the gap, or handed it back. */
  fellBehind(): boolean;
  /** Whether it heard of a failed step (a GET, a LIST) it then retried. */
  sawFailure(): boolean;
  stop(): Promise<void>;
}

interface Subject {
  readonly name: string;
  /** How long it waits at an absent object, no member behind its leader, before it LISTs for the floor. */
  readonly floorCheckIdleMs: number;
  follow(store: MemoryStore, clock: Clock, topicId: Uuid): Following;
}

const opened: PartitionLog[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  for (const log of opened.splice(0)) await log.close();
});

function openLog(): PartitionLog {
  const log = PartitionLog.open(tempDir());
  opened.push(log);
  return log;
}

const readReplica: Subject = {
  name: 'Follower (library read replica)',
  floorCheckIdleMs: FOLLOWER_FLOOR_CHECK_INTERVAL_MS,
  follow(store, clock, topicId) {
    let log: PartitionLog | undefined;
    const target = { log: (_topic: string, partition: number, id: Uuid) => (partition === 0 && id === topicId ? (log ??= openLog()) : null) };
    const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: PREFIX, wants: () => true }, { clock, random: new SeededRandom(7) });
    const config = { ...DEFAULT_FOLLOWER_CONFIG, ...POLL, writerId: STREAM.writerId };
    const follower = new Follower(store, reader, target, config, { clock, checkpointPath: join(tempDir(), 'checkpoint') });
    follower.start();
    const following = {
      log: () => log,
      fellBehind: () => follower.failure?.message.includes('continues at offset') === true,
      sawFailure: () => follower.lastReadError !== null,
      stop: () => follower.stop(),
    };
    stops.push(following.stop);
    return following;
  },
};

const clusterFollower: Subject = {
  name: 'StreamTails (cluster follower)',
  floorCheckIdleMs: FLOOR_CHECK_IDLE_MS,
  follow(store, clock, topicId) {
    const metrics = new MetricsRegistry();
    let fell = false;
    const tails = new StreamTails({
      store,
      prefix: PREFIX,
      clock,
      random: new SeededRandom(2),
      ...POLL,
      readChain: async () => [STREAM],
      fellBehindFloor: () => void (fell = true),
      metrics,
      report: () => {},
    });
    const log = openLog();
    tails.follow({ topic: 't', topicId, partition: 0, log, applied: () => {} }, [STREAM]);
    const following = {
      log: () => log,
      fellBehind: () => fell,
      sawFailure: () => Number(/ferry_stream_tail_errors_total (\d+)/.exec(metrics.renderPrometheus())?.[1] ?? 0) > 0,
      stop: async () => tails.stopAll(),
    };
    stops.push(following.stop);
    return following;
  },
};

/** The leader: a WAL writer putting each batch in its own object, and the log of each incarnation's partition. */
function leaderOf(store: MemoryStore) {
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: PREFIX, stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  const logs = new Map<string, PartitionLog>();
  const logOf = (topicId: Uuid, partition: number) => {
    const key = `${topicId}/${partition}`;
    if (!logs.has(key)) logs.set(key, openLog());
    return logs.get(key)!;
  };
  return {
    logOf,
    async ship(count: number, partition = 0, topicId = TOPIC_ID): Promise<void> {
      const log = logOf(topicId, partition);
      for (let i = 0; i < count; i++) {
        const at = log.logEndOffset;
        const data = Uint8Array.from(log.append(batchOf(`${topicId}-${partition}-${at}`), 0).batches[0]!.bytes);
        await wal.append({ topic: 't', topicId, partition, leaderEpoch: 0, baseOffset: at, lastOffset: at, data });
      }
      await wal.flush();
    },
  };
}

function hex(log: PartitionLog | undefined): string[] {
  return log === undefined ? [] : log.read(0, 1 << 20).batches.map((batch) => Buffer.from(batch.bytes).toString('hex'));
}

/** Moves `clock` 1 ms at each poll of `until` (5 real ms) until `condition` holds: for a wait that spans real I/O (a log's flush). */
async function advanceWithRealTime(clock: ManualClock, condition: () => boolean, what: string): Promise<void> {
  await until(() => {
    clock.advance(1);
    return condition();
  }, what);
}

function endOf(following: Following): number {
  return following.log()?.logEndOffset ?? 0;
}

for (const subject of [readReplica, clusterFollower]) {
  describe(subject.name, () => {
    test('catches up on objects written before it started, fetching ahead, byte-identical to the leader', async () => {
      const store = new WatchedStore();
      const leader = leaderOf(store);
      await leader.ship(24);
      const following = subject.follow(store, systemClock, TOPIC_ID);
      await until(() => endOf(following) === 24, 'the follower to catch up');
      expect(store.inFlightMax).toBeGreaterThan(1); // objects fetched ahead, still applied in order
      expect(hex(following.log())).toEqual(hex(leader.logOf(TOPIC_ID, 0)));
    });

    test('at the end of the stream it probes less and less often, down to pollIntervalMaxMs', async () => {
      const store = new WatchedStore();
      const clock = new ManualClock();
      store.clock = clock;
      await leaderOf(store).ship(1);
      const following = subject.follow(store, clock, TOPIC_ID);
      const key = walObjectKey(PREFIX, STREAM, 1);
      await advanceWithRealTime(clock, () => endOf(following) === 1 && store.readsMs.has(key), 'the follower to wait at object 1');
      await advanceUntil(clock, () => (store.readsMs.get(key)?.length ?? 0) >= PROBES, 'probes of the next object', 1, 5_000);
      const probesMs = store.readsMs.get(key)!;
      const gapsMs = probesMs.slice(1).map((atMs, i) => atMs - probesMs[i]!);
      for (let i = 1; i < gapsMs.length; i++) expect(gapsMs[i]!).toBeGreaterThanOrEqual(gapsMs[i - 1]!);
      expect(gapsMs[0]).toBe(POLL.pollIntervalMs);
      expect(gapsMs.at(-1)).toBe(POLL.pollIntervalMaxMs);
    });

    test('waiting at an object GC then took, it LISTs the stream after its idle delay and gives the partition up rather than apply across the gap', async () => {
      const store = new WatchedStore();
      const clock = new ManualClock();
      const leader = leaderOf(store);
      await leader.ship(1); // object 0: offset 0
      const following = subject.follow(store, clock, TOPIC_ID);
      // A checkpoint's flush is real I/O: simulated time moves with real time until the follower waits at object 1.
      await advanceWithRealTime(clock, () => endOf(following) === 1 && store.readsMs.has(walObjectKey(PREFIX, STREAM, 1)), 'the follower to wait at object 1');
      await leader.ship(3); // objects 1..3: offsets 1..3, never read (the follower's clock stands still)
      for (const sequence of [0, 1, 2]) await store.delete(walObjectKey(PREFIX, STREAM, sequence)); // GC, a prefix [G4]: the tier covers offsets 0..2
      await advanceUntil(clock, () => following.fellBehind(), 'the follower to find the floor above it', 50, subject.floorCheckIdleMs + 5_000);
      expect(endOf(following)).toBe(1); // nothing applied across the gap
    });

    test('skips the frames of another incarnation of the topic, wherever they lie in the stream', async () => {
      const store = new MemoryStore();
      const leader = leaderOf(store);
      const deleted = idOf('t-before');
      await leader.ship(2, 0, deleted);
      await leader.ship(1);
      await leader.ship(1, 0, deleted);
      await leader.ship(2);
      const following = subject.follow(store, systemClock, TOPIC_ID);
      await until(() => endOf(following) === 3, 'the follower to apply its incarnation');
      await leader.ship(1, 0, deleted);
      await leader.ship(1);
      await until(() => endOf(following) === 4, 'the follower to go on past the other incarnation');
      expect(hex(following.log())).toEqual(hex(leader.logOf(TOPIC_ID, 0)));
    });

    test('a failed GET is retried from the same object, never skipped', async () => {
      const store = new MemoryStore();
      const leader = leaderOf(store);
      await leader.ship(4);
      store.injectFault({ operation: 'get', kind: 'PreconditionFailed', count: 3, keyPrefix: walObjectKey(PREFIX, STREAM, 2) });
      const following = subject.follow(store, systemClock, TOPIC_ID);
      await until(() => endOf(following) === 4, 'the follower to read past the failing object');
      expect(following.sawFailure()).toBe(true);
      expect(hex(following.log())).toEqual(hex(leader.logOf(TOPIC_ID, 0)));
    });

    test('a failed LIST of the stream it starts from is retried, the start kept (seed 45: a tail whose first LIST timed out idled for good)', async () => {
      const store = new MemoryStore();
      const leader = leaderOf(store);
      await leader.ship(3);
      store.injectFault({ operation: 'list', kind: 'Timeout', count: 2, keyPrefix: streamPrefix(PREFIX, STREAM) });
      const following = subject.follow(store, systemClock, TOPIC_ID);
      await until(() => endOf(following) === 3, 'the follower to start after its failed LISTs');
      expect(following.sawFailure()).toBe(true);
      expect(hex(following.log())).toEqual(hex(leader.logOf(TOPIC_ID, 0)));
    });
  });
}
