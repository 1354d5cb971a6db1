import { expect, test } from 'bun:test';
import { StreamTails } from '../../src/cluster/stream-tails.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { until } from '../support/until.ts';

function writer(store: MemoryStore, stream: StreamId): WalWriter {
  return new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadIntervalMs: 1, prefix: 'p', stream }, { clock: systemClock, random: new SeededRandom(1) });
}

test('one tail feeds every followed partition of a stream; a late joiner catches up; at a seal they move to the next leader', async () => {
  const store = new MemoryStore();
  const a: StreamId = { writerId: 'a', epoch: 0 };
  const b: StreamId = { writerId: 'b', epoch: 0 };
  const chains = new Map<string, StreamId[]>([
    ['t/0', [a]],
    ['t/1', [a]],
  ]);
  const tails = new StreamTails({
    store,
    prefix: 'p',
    clock: systemClock,
    random: new SeededRandom(2),
    pollIntervalMs: 1,
    pollIntervalMaxMs: 5,
    readChain: async (topic, partition) => chains.get(`${topic}/${partition}`)!,
  });
  const logs = [0, 1].map(() => PartitionLog.open(tempDir()));
  const leader = writer(store, a);
  const offset = [0, 0];
  const ship = async (wal: WalWriter, partition: number, count: number) => {
    for (let i = 0; i < count; i++) {
      const at = offset[partition]!;
      wal.append({
        topic: 't',
        topicId: idOf('t'),
        partition,
        leaderEpoch: 0,
        baseOffset: at,
        lastOffset: at,
        data: Uint8Array.from(logsLeader[partition]!.append(batchOf(`p${partition}-${at}`), 0).batches[0]!.bytes),
      });
      offset[partition] = at + 1;
    }
    await wal.flush();
  };
  const logsLeader = [0, 1].map(() => PartitionLog.open(tempDir()));
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log: logs[0]!, applied: () => {} }, [a]);
  await ship(leader, 0, 5);
  await ship(leader, 1, 5);
  await until(() => logs[0]!.logEndOffset === 5, 'partition 0 on the tail');
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 1, log: logs[1]!, applied: () => {} }, [a]); // joins late: catches up alone first
  await until(() => logs[1]!.logEndOffset === 5, 'the late joiner to catch up');
  // Leader a is replaced by b: a's stream is sealed, the chains name b next.
  await sealStream(store, 'p', a, { writerId: 'b', nowMs: 0 });
  chains.set('t/0', [a, b]);
  chains.set('t/1', [a, b]);
  const successor = writer(store, b);
  await ship(successor, 0, 3);
  await ship(successor, 1, 3);
  await until(() => logs[0]!.logEndOffset === 8 && logs[1]!.logEndOffset === 8, 'both partitions to follow b');
  const reads = store.stats().requests.get;
  tails.stopAll();
  for (const [follower, source] of [
    [logs[0]!, logsLeader[0]!],
    [logs[1]!, logsLeader[1]!],
  ] as const) {
    expect(follower.read(0, 1 << 20).batches.map((x) => Buffer.from(x.bytes).toString('hex'))).toEqual(source.read(0, 1 << 20).batches.map((x) => Buffer.from(x.bytes).toString('hex')));
  }
  expect(reads).toBeGreaterThan(0);
  for (const log of [...logs, ...logsLeader]) await log.close();
});

test('a tail whose step throws is retried with backoff, counted and logged, and goes on (a chain read failing at a seal, a joiner catch-up failing)', async () => {
  const { MetricsRegistry } = await import('../../src/metrics/index.ts');
  const store = new MemoryStore();
  const a: StreamId = { writerId: 'a', epoch: 0 };
  const b: StreamId = { writerId: 'b', epoch: 0 };
  let chain: StreamId[] = [a];
  let chainFailures = 2;
  const reports: string[] = [];
  const metrics = new MetricsRegistry();
  const readChain = async () => {
    if (chainFailures-- > 0) throw new Error('control store unavailable');
    return chain;
  };
  const tails = new StreamTails({ store, prefix: 'p', clock: systemClock, random: new SeededRandom(3), pollIntervalMs: 1, pollIntervalMaxMs: 5, readChain, report: (m) => reports.push(m), metrics });
  const source = PartitionLog.open(tempDir());
  const followers = [PartitionLog.open(tempDir()), PartitionLog.open(tempDir())];
  let next = 0;
  const ship = async (wal: WalWriter, count: number, partitions: readonly number[]) => {
    for (let i = 0; i < count; i++, next++) {
      const data = Uint8Array.from(source.append(batchOf(`r-${next}`), 0).batches[0]!.bytes);
      for (const partition of partitions) wal.append({ topic: 't', topicId: idOf('t'), partition, leaderEpoch: 0, baseOffset: next, lastOffset: next, data });
    }
    await wal.flush();
  };
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 0, log: followers[0]!, applied: () => {} }, [a]);
  const leader = writer(store, a);
  await ship(leader, 3, [0, 1]);
  await until(() => followers[0]!.logEndOffset === 3, 'partition 0 on the tail');
  // A late joiner's catch-up read fails (a GET of a's first object): it stays queued and is retried.
  store.injectFault({ operation: 'get', kind: 'PreconditionFailed', count: 2, keyPrefix: 'p/wal/a/' });
  tails.follow({ topic: 't', topicId: idOf('t'), partition: 1, log: followers[1]!, applied: () => {} }, [a]);
  await until(() => followers[1]!.logEndOffset === 3, 'the joiner to catch up after its failed reads');
  // a is sealed: the chain read fails twice before it names b; the tail retries and moves both on.
  await sealStream(store, 'p', a, { writerId: 'b', nowMs: 0 });
  chain = [a, b];
  next = 3;
  await ship(writer(store, b), 2, [0, 1]);
  await until(() => followers.every((log) => log.logEndOffset === 5), 'both partitions to follow b after the failed chain reads');
  tails.stopAll();
  const errors = Number(/ferry_stream_tail_errors_total (\d+)/.exec(metrics.renderPrometheus())?.[1] ?? 0);
  expect(errors).toBeGreaterThanOrEqual(3);
  expect(reports.some((m) => m.includes('control store unavailable') && m.includes('retrying'))).toBe(true);
  for (const log of [source, ...followers]) await log.close();
});
