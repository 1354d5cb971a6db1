// A retried idempotent batch answers what the original attempt's durability answers (issue 9,
// finding 1; docs/design.md contract 11): the same offset once the original is committed, the same
// failure when the original can never be, and nothing before.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { rebuildFromChain } from '../../src/partition/rebuild.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { ensureSealed } from '../../src/wal/seal.ts';
import { tempDir } from '../support/temp-dir.ts';
import { managedBy } from '../support/cluster-policy.ts';

const UPLOAD_INTERVAL_MS = 1000;

function idempotent(sequence: number, nowMs: number): Uint8Array {
  return buildRecordBatch([{ value: `v${sequence}` }], { nowMs, producerId: 5, producerEpoch: 0, baseSequence: sequence });
}

async function settled(promise: Promise<void>): Promise<'resolved' | 'rejected' | 'pending'> {
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  return state;
}

async function openEngine(store: MemoryStore, clock: ManualClock): Promise<Engine> {
  const ferry = await Engine.open({ directory: tempDir(), clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } });
  ferry.createTopic('t');
  return ferry;
}

test('a retry before the original is durable waits for it, then answers the original offset', async () => {
  const clock = new ManualClock();
  const ferry = await openEngine(new MemoryStore(), clock);
  const first = await ferry.appendBatches('t', 0, idempotent(0, clock.nowMs()));
  const retry = await ferry.appendBatches('t', 0, idempotent(0, clock.nowMs()));
  expect(retry.baseOffset).toBe(first.baseOffset);
  expect(await settled(retry.committed)).toBe('pending'); // the WAL object is not uploaded yet
  clock.advance(UPLOAD_INTERVAL_MS);
  expect(await settled(first.committed)).toBe('resolved');
  expect(await settled(retry.committed)).toBe('resolved');
  const next = await ferry.appendBatches('t', 0, idempotent(1, clock.nowMs()));
  expect(next.baseOffset).toBe(1); // the retry wrote nothing
  await ferry.close();
});

test('a retry of a batch that can never become durable fails as the original does', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const ferry = await openEngine(store, clock);
  const first = await ferry.appendBatches('t', 0, idempotent(0, clock.nowMs()));
  const retry = await ferry.appendBatches('t', 0, idempotent(0, clock.nowMs()));
  expect(retry.baseOffset).toBe(first.baseOffset);
  store.injectFault({ operation: 'put', kind: 'AccessDenied' }); // not retriable: the writer fails
  clock.advance(UPLOAD_INTERVAL_MS);
  expect(await settled(first.committed)).toBe('rejected');
  expect(await settled(retry.committed)).toBe('rejected');
  await ferry.close();
});

test('a partition rebuilt from its WAL chain (a takeover) knows the producers: a retry is answered with the original offset', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const leader = await openEngine(store, clock);
  const stream = leader.wal!.config.stream;
  const topicId = leader.topics().find((topic) => topic.name === 't')!.id;
  for (let sequence = 0; sequence < 3; sequence++) {
    const appended = await leader.appendBatches('t', 0, idempotent(sequence, clock.nowMs()));
    clock.advance(UPLOAD_INTERVAL_MS);
    await appended.committed;
  }
  await leader.close();
  await ensureSealed(store, '', stream, { writerId: 'successor', nowMs: clock.nowMs() });
  const successor = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy(),
    log: { flush: { kind: 'none' } },
    wal: { store, writerId: 'successor', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } },
  });
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock, random: new SeededRandom(1) });
  await successor.adoptPartition('t', topicId, 0, 1, async (log) => void (await rebuildFromChain(reader, log, [stream], topicId)));
  const retry = await successor.appendBatches('t', 0, idempotent(2, clock.nowMs()));
  expect(retry.baseOffset).toBe(2);
  expect(await settled(retry.committed)).toBe('resolved'); // the rebuilt log is durable already
  expect((await successor.appendBatches('t', 0, idempotent(3, clock.nowMs()))).baseOffset).toBe(3);
  await successor.close();
});
