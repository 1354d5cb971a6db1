// The single-writer follower reads each stream from its WAL floor (docs/tier-protocol.md [G4]):
// a checkpoint older than what WAL GC collected (the checkpoint lags by design) moves up to the
// floor instead of waiting at an absent object for ever, and a follower that would need collected
// frames fails with the gap instead of being stuck or admitted with it.
import { afterEach, expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../src/engine/index.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { DEFAULT_FOLLOWER_CONFIG, Follower } from '../../src/partition/follower.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const CHECKPOINT = 'follower.checkpoint';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function leaderOf(store: MemoryStore): Promise<{ ferry: Engine; produce(count: number): Promise<void> }> {
  const ferry = await Engine.open({ directory: tempDir(), wal: { store, writerId: 'leader', config: { uploadBytes: 1, uploadIntervalMs: 1 } } });
  cleanups.push(() => ferry.close());
  ferry.createTopic('t');
  let next = 0;
  return {
    ferry,
    async produce(count: number) {
      for (let i = 0; i < count; i++) await ferry.produce('t', [{ value: `v${next++}` }], { partition: 0 }); // one WAL object each: uploadBytes 1
    },
  };
}

function followerIn(store: MemoryStore, directory: string): { instance: Follower; log: () => PartitionLog | undefined } {
  let log: PartitionLog | undefined;
  const target = { log: () => (log ??= PartitionLog.open(join(directory, 't-0'))) };
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: systemClock, random: new SeededRandom(7) });
  const instance = new Follower(store, reader, target, { ...DEFAULT_FOLLOWER_CONFIG, writerId: 'leader', pollIntervalMs: 2 }, { clock: systemClock, checkpointPath: join(directory, CHECKPOINT) });
  cleanups.push(async () => {
    await instance.stop();
    await log?.close();
  });
  return { instance, log: () => log };
}

function leaderHex(ferry: Engine): string[] {
  const out: string[] = [];
  for (let at = 0; at < ferry.logEndOffset('t', 0); ) {
    const { batches } = ferry.fetch('t', 0, at);
    for (const batch of batches) out.push(Buffer.from(batch.bytes).toString('hex'));
    at = batches.at(-1)!.lastOffset + 1;
  }
  return out;
}

function hex(log: PartitionLog): string[] {
  return log.read(0, 1 << 20).batches.map((batch) => Buffer.from(batch.bytes).toString('hex'));
}

test('a follower restarting from a checkpoint below the floor moves up to it and ends byte-identical to the leader', async () => {
  const store = new MemoryStore();
  const leader = await leaderOf(store);
  await leader.produce(6);
  const directory = tempDir();
  const first = followerIn(store, directory);
  first.instance.start();
  await until(() => first.log()?.logEndOffset === 6, 'the follower to apply 6 records');
  await first.instance.stop();
  await first.log()!.close();
  const saved = JSON.parse(readFileSync(join(directory, CHECKPOINT), 'utf8')) as { writerId: string; epoch: number; sequence: number };
  expect(saved.sequence).toBe(6);
  writeFileSync(join(directory, CHECKPOINT), JSON.stringify({ ...saved, sequence: 1 })); // a crash left an older checkpoint
  for (let sequence = 0; sequence < 5; sequence++) await store.delete(walObjectKey('', { writerId: 'leader', epoch: saved.epoch }, sequence)); // GC: applied and covered

  const again = followerIn(store, directory);
  again.instance.start();
  await leader.produce(3);
  await until(() => again.log()?.logEndOffset === 9, 'the restarted follower to apply the rest');
  expect(again.instance.stats().floorSkips).toBe(1);
  expect(again.instance.failure).toBeNull();
  expect(hex(again.log()!)).toEqual(leaderHex(leader.ferry));
});

test('a fresh follower of a stream whose prefix was collected fails with the gap, neither stuck at 0 nor admitted with it', async () => {
  const store = new MemoryStore();
  const leader = await leaderOf(store);
  await leader.produce(4);
  const stream = leader.ferry.wal!.config.stream;
  for (let sequence = 0; sequence < 2; sequence++) await store.delete(walObjectKey('', stream, sequence));
  const fresh = followerIn(store, tempDir());
  fresh.instance.start();
  await until(() => fresh.instance.failure !== null, 'the follower to meet the gap');
  expect(fresh.instance.failure!.message).toContain('continues at offset 2');
  expect(fresh.log()!.logEndOffset).toBe(0);
});
