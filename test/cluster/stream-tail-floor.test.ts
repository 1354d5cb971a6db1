// docs/tier-protocol.md [D4]: a follower whose next WAL object GC took (below its stream's floor)
// neither waits at the "end" forever nor is admitted with a gap: it leaves the tail, and the host
// follows it again from the tier's end and the floors, ending byte-identical to the leader.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { FLOOR_CHECK_DELAY_MS, FLOOR_CHECK_IDLE_MS, type FollowedPartition, StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { settle } from '../support/settle.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(20_000);

const STREAM: StreamId = { writerId: 'leader', epoch: 0 };
const TOPIC_ID = idOf('t');

/** A store a follower cannot read WAL objects from while `blind` (a network partition): they look absent. */
class BlindableStore extends MemoryStore {
  blind = false;
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    if (this.blind) throw new StoreError('NotFound', 'injected: the follower is cut off', { key });
    return super.get(key, options);
  }
}

const opened: PartitionLog[] = [];
let tails: StreamTails | null = null;
afterEach(async () => {
  tails?.stopAll();
  for (const log of opened.splice(0)) await log.close();
});

function openLog(): PartitionLog {
  const log = PartitionLog.open(tempDir());
  opened.push(log);
  return log;
}

/** The leader: a log and a WAL writer that puts each batch of partition `partition` in its own object. */
function leaderOf(store: MemoryStore) {
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  const logs = [openLog(), openLog()];
  return {
    logs,
    async ship(partition: number, count: number): Promise<void> {
      const log = logs[partition]!;
      for (let i = 0; i < count; i++) {
        const at = log.logEndOffset;
        const bytes = Uint8Array.from(log.append(batchOf(`p${partition}-${at}`), 0).batches[0]!.bytes);
        await wal.append({ topic: 't', topicId: TOPIC_ID, partition, leaderEpoch: 0, baseOffset: at, lastOffset: at, data: bytes });
      }
      await wal.flush();
    },
  };
}

async function collect(store: MemoryStore, from: number, to: number): Promise<void> {
  for (let sequence = from; sequence < to; sequence++) await store.delete(walObjectKey('p', STREAM, sequence));
}

function hex(log: PartitionLog, from: number): string[] {
  return log.read(from, 1 << 20).batches.map((batch) => Buffer.from(batch.bytes).toString('hex'));
}

function tailsOf(store: MemoryStore, fellBehind: (topic: string, partition: number) => void): StreamTails {
  tails = new StreamTails({
    store,
    prefix: 'p',
    clock: systemClock,
    random: new SeededRandom(2),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async () => [STREAM],
    fellBehindFloor: fellBehind,
  });
  return tails;
}

test('a tail whose next object GC took while it was cut off falls back, and following again ends byte-identical to the leader', async () => {
  const store = new BlindableStore();
  const leader = leaderOf(store);
  await leader.ship(0, 5); // objects 0..4: offsets 0..4
  const fellBehind: string[] = [];
  const follower: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 0, log: openLog(), applied: () => {}, leaderHighWatermark: () => leader.logs[0]!.logEndOffset };
  tailsOf(store, (topic, partition) => fellBehind.push(`${topic}-${partition}`)).follow(follower, [STREAM]);
  await until(() => follower.log.logEndOffset === 5, 'the follower to apply offsets 0..4');
  store.blind = true; // out of the ISR: GC no longer waits for it
  await leader.ship(0, 5); // objects 5..9
  await collect(store, 0, 8); // the tier covers offsets 0..7
  const cutOffAt = performance.now();
  store.blind = false;
  await until(() => fellBehind.length > 0, 'the tail to find its next object below the floor', 4 * FLOOR_CHECK_DELAY_MS);
  expect(performance.now() - cutOffAt).toBeGreaterThanOrEqual(FLOOR_CHECK_DELAY_MS * 0.9); // it LISTed only after the delay
  expect(fellBehind).toEqual(['t-0']);
  expect(follower.log.logEndOffset).toBe(5); // nothing applied across the gap

  // What PartitionHost does [D4]: rebuild from the tier's end and the floor, then tail again.
  const again = openLog();
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: 'p', wants: (t, p) => t === 't' && p === 0 }, { clock: systemClock, random: new SeededRandom(3) });
  await rebuildFromTierAndChain(reader, again, [], TOPIC_ID, async () => ({ offset: 8, epochs: [], producers: null }));
  tails!.follow({ ...follower, log: again }, [STREAM]);
  await leader.ship(0, 2);
  await until(() => again.logEndOffset === 12, 'the follower to follow again');
  expect(hex(again, 8)).toEqual(hex(leader.logs[0]!, 8));
  expect(fellBehind).toEqual(['t-0']);
});

test('a joiner whose catch-up starts below the floor is not admitted with a gap; the other members go on', async () => {
  const store = new MemoryStore();
  const leader = leaderOf(store);
  const fellBehind: string[] = [];
  const tailsHere = tailsOf(store, (topic, partition) => fellBehind.push(`${topic}-${partition}`));
  const first: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 0, log: openLog(), applied: () => {} };
  tailsHere.follow(first, [STREAM]);
  await leader.ship(1, 4); // objects 0..3: partition 1, offsets 0..3
  await leader.ship(0, 2); // objects 4..5: partition 0
  await until(() => first.log.logEndOffset === 2, 'partition 0 on the tail');
  await collect(store, 0, 2); // GC took partition 1's offsets 0..1: the tier covers them
  const joiner: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 1, log: openLog(), applied: () => {} }; // rebuilt from an older tiered end, 0
  tailsHere.follow(joiner, [STREAM]);
  await until(() => fellBehind.length > 0, 'the joiner to fall behind the floor');
  expect(fellBehind).toEqual(['t-1']);
  expect(joiner.log.logEndOffset).toBe(0); // never admitted with a gap
  await leader.ship(0, 1);
  await until(() => first.log.logEndOffset === 3, 'partition 0 to go on');
  expect(hex(first.log, 0)).toEqual(hex(leader.logs[0]!, 0));
});

test("a new tail starts at its stream's floor, not at 0", async () => {
  const store = new MemoryStore();
  const leader = leaderOf(store);
  await leader.ship(0, 6);
  await collect(store, 0, 3);
  const log = openLog();
  log.startAt(3, [], null); // rebuilt from the tier's end, 3
  const reads: number[] = [];
  const counting = new Proxy(store, {
    get: (target, name) => {
      if (name === 'get') return (key: string, options?: GetOptions) => (reads.push(Number(key.split('/').at(-1))), target.get(key, options));
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  tails = new StreamTails({
    store: counting,
    prefix: 'p',
    clock: systemClock,
    random: new SeededRandom(2),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async () => [STREAM],
    fellBehindFloor: () => {
      throw new Error('no fallback expected');
    },
  });
  tails.follow({ topic: 't', topicId: TOPIC_ID, partition: 0, log, applied: () => {} }, [STREAM]);
  await until(() => log.logEndOffset === 6, 'the follower to apply offsets 3..5');
  expect(Math.min(...reads)).toBe(3);
  expect(hex(log, 3)).toEqual(hex(leader.logs[0]!, 3));
});

test('a joiner whose catch-up object GC takes between its LIST and its read falls back instead of being admitted with a gap', async () => {
  let trigger = '';
  let raced = false;
  class RacingGcStore extends MemoryStore {
    override async get(key: string, options?: GetOptions): Promise<GetResult> {
      if (key === trigger && !raced) {
        raced = true;
        await collect(this, 2, 4); // GC takes objects 2 and 3 (the tier covers partition 1's offsets up to 4)
      }
      return super.get(key, options);
    }
  }
  const store = new RacingGcStore();
  const leader = leaderOf(store);
  const fellBehind: string[] = [];
  const tailsHere = tailsOf(store, (topic, partition) => fellBehind.push(`${topic}-${partition}`));
  const first: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 0, log: openLog(), applied: () => {} };
  tailsHere.follow(first, [STREAM]);
  await leader.ship(1, 4); // objects 0..3: partition 1, offsets 0..3
  await leader.ship(0, 2); // objects 4..5: partition 0
  await until(() => first.log.logEndOffset === 2, 'partition 0 on the tail');
  await collect(store, 0, 2); // the tier covered partition 1's offsets 0..1
  const joinerLog = openLog();
  joinerLog.startAt(2, [], null); // rebuilt from the tier's end then, 2
  trigger = walObjectKey('p', STREAM, 2);
  tailsHere.follow({ topic: 't', topicId: TOPIC_ID, partition: 1, log: joinerLog, applied: () => {} }, [STREAM]);
  await until(() => fellBehind.length > 0, 'the joiner to fall behind the floor');
  expect(raced).toBe(true);
  expect(fellBehind).toEqual(['t-1']);
  expect(joinerLog.logEndOffset).toBe(2);
});

test("a new tail whose first object GC takes between its LIST and its read falls back at once, though the leader's high watermark waits for it", async () => {
  let raced = false;
  class RacingGcStore extends MemoryStore {
    override async get(key: string, options?: GetOptions): Promise<GetResult> {
      if (key === walObjectKey('p', STREAM, 0) && !raced) {
        raced = true;
        await collect(this, 0, 4); // GC takes objects 0..3: nothing the follower wants (another partition's, as a deleted incarnation's)
      }
      return super.get(key, options);
    }
  }
  const store = new RacingGcStore();
  const leader = leaderOf(store);
  await leader.ship(1, 4); // objects 0..3: partition 1
  await leader.ship(0, 2); // objects 4..5: partition 0, offsets 0..1
  const fellBehind: string[] = [];
  const log = openLog();
  // min.insync.replicas = replication factor: the leader's high watermark is this follower's own end, so it is never behind it.
  const follower: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 0, log, applied: () => {}, leaderHighWatermark: () => log.logEndOffset };
  tailsOf(store, (topic, partition) => fellBehind.push(`${topic}-${partition}`)).follow(follower, [STREAM]);
  await until(() => fellBehind.length > 0, 'the tail to find its listed first object gone', FLOOR_CHECK_DELAY_MS * 2);
  expect(raced).toBe(true);
  expect(fellBehind).toEqual(['t-0']);
  expect(log.logEndOffset).toBe(0);
});

test('a tail at an object GC took after it got there, no member behind the leader (min.insync = RF), LISTs its stream after FLOOR_CHECK_IDLE_MS and falls back', async () => {
  const store = new MemoryStore();
  const leader = leaderOf(store);
  await leader.ship(0, 1); // object 0: partition 0, offset 0
  const log = openLog();
  const follower: FollowedPartition = { topic: 't', topicId: TOPIC_ID, partition: 0, log, applied: () => {}, leaderHighWatermark: () => log.logEndOffset };
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
  for (let i = 0; i < 100 && log.logEndOffset < 1; i++) {
    clock.advance(5);
    await settle();
  }
  expect(log.logEndOffset).toBe(1); // caught up: the tail waits at object 1
  await leader.ship(1, 3); // objects 1..3: another partition's
  await leader.ship(0, 1); // object 4: partition 0, offset 1
  await collect(store, 0, 4); // GC takes 0..3, in order, before the tail polls 1..3 (nothing of partition 0 in them)
  for (let waited = 0; waited <= FLOOR_CHECK_IDLE_MS && fellBehind.length === 0; waited += 50) {
    clock.advance(50);
    await settle();
  }
  expect(fellBehind).toEqual(['t-0']);
});
