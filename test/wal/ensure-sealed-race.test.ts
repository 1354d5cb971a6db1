// Two successors adopting partitions of one dead broker run ensureSealed on its stream at once
// ([C4], docs/wal-protocol.md [F1]-[F4]). One seal per stream: the one that loses the race must
// find the other's seal, never write a second one above it.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult, ObjectStore } from '../../src/store/object-store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed, listSequences } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { settle } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 3 };

/** A store whose GETs of `key` answer only once the test lets them go (what they read is read first). */
function getGate(inner: MemoryStore, key: string): { store: ObjectStore; open: () => void; reached: () => boolean } {
  let reached = false;
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const get = async (k: string, options?: GetOptions): Promise<GetResult> => {
    const result = await inner.get(k, options);
    if (k === key) {
      reached = true;
      await gate;
    }
    return result;
  };
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'get') return get;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { store, open, reached: () => reached };
}

async function seals(store: MemoryStore): Promise<number[]> {
  const found: number[] = [];
  for (const sequence of [...(await listSequences(store, 'p', STREAM))].sort((a, b) => a - b)) {
    if (decodeWalObject((await store.get(walObjectKey('p', STREAM, sequence))).body).header.kind === 'seal') found.push(sequence);
  }
  return found;
}

test("ensureSealed racing another successor never writes a second seal above the winner's", async () => {
  const inner = new MemoryStore();
  const wal = new WalWriter(inner, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  for (let offset = 0; offset < 3; offset++) await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  await wal.flush();
  // Successor B looks for a seal among the stream's top objects (2, 1, 0) and finds none; the
  // answer about object 0, the last it looks at, is held while successor C seals the stream.
  const gated = getGate(inner, walObjectKey('p', STREAM, 0));
  const b = ensureSealed(gated.store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 });
  await settle(20);
  expect(gated.reached()).toBe(true);
  expect(await ensureSealed(inner, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })).toBe(3);
  gated.open();
  expect(await b).toBe(3); // B learns the stream is sealed at 3, by C
  expect(await seals(inner)).toEqual([3]);
});
