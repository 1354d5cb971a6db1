// Found by the simulation (seed 130): a WAL put whose answer was lost (a timeout after it took
// effect) is retried, meets PreconditionFailed, and the writer reads the key back to see whether
// the object there is its own. That read came back with a bit flipped on the way; the writer took
// the damaged copy of its own object for another writer's and fenced itself. A single broker has
// no cluster to start a new writer epoch: it answered NOT_LEADER_OR_FOLLOWER to every produce
// from then on.
import { expect, test } from 'bun:test';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeSeal } from '../../src/wal/format.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { advanceThrough } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

/** A store whose next `corruptGets` GETs answer the object with one bit flipped (damage on the path, not in the store). */
class BitFlippingStore extends MemoryStore {
  corruptGets = 0;

  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    const result = await super.get(key, options);
    if (this.corruptGets === 0 || result.body.length === 0) return result;
    this.corruptGets--;
    const body = result.body.slice();
    body[Math.floor(body.length / 2)]! ^= 0x10;
    return { ...result, body };
  }
}

const STREAM = { writerId: 'w', epoch: 1 };

function writerOn(store: MemoryStore, clock: ManualClock): WalWriter {
  const config = { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, prefix: 'cluster', stream: STREAM };
  return new WalWriter(store, config, { clock, random: new SeededRandom(1) });
}

function appendOne(wal: WalWriter): Promise<void> {
  return wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 0, lastOffset: 0, data: batchOf('x') });
}

test('a damaged read of its own landed put does not fence the writer: it reads again', async () => {
  const clock = new ManualClock();
  const store = new BitFlippingStore();
  const wal = writerOn(store, clock);
  // The put lands but its answer is lost; the retry meets PreconditionFailed; the read back is damaged twice.
  store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
  store.corruptGets = 2;
  const outcome = await advanceThrough(
    clock,
    appendOne(wal).then(
      () => 'durable',
      (error: unknown) => String(error),
    ),
    'the append',
  );
  expect(outcome).toBe('durable');
  expect(wal.failure).toBeNull();
  expect(store.corruptGets).toBe(0);
});

test('a foreign object that verifies at its key still fences the writer', async () => {
  const clock = new ManualClock();
  const store = new BitFlippingStore();
  const wal = writerOn(store, clock);
  // A successor sealed the stream at the writer's first slot: a whole, valid object that is not ours.
  await store.put(walObjectKey('cluster', STREAM, 0), encodeSeal({ ...STREAM, sequence: 0, createdMs: 0 }));
  const outcome = await advanceThrough(
    clock,
    appendOne(wal).then(
      () => 'durable',
      (error: unknown) => String(error),
    ),
    'the append',
  );
  expect(outcome).toContain('fenced');
  expect(wal.failure?.kind).toBe('Fenced');
});
