// wal-gc-needed (docs/tier-protocol.md GI1, GI2, [G4], [G6]): hand-built delete histories, and
// deletes recorded at a MemoryStore (WalDeleteRecorder) from the real collector and from a
// collector that takes what it must not.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { History, WalDelete } from '../../src/sim/history.ts';
import { deletedWalRecords, WalDeleteRecorder } from '../../src/sim/wal-gc.ts';
import { WalWrites } from '../../src/sim/wal-audit.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { history, validOps, replica, VALID_LOG } from './history-fixture.ts';
import { putSeal, putStream, TOPIC_ID, World, collectorOf as gcOf } from '../wal-gc/support.ts';
import { WalCollector } from '../../src/wal-gc/collector.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';

const frame = (lastOffset: number, tieredEnd: number, incarnationDeleted = false) => ({ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partition: 0, lastOffset, tieredEnd, incarnationDeleted });

function deletion(sequence: number, parts: Partial<WalDelete> = {}): WalDelete {
  return {
    atMs: 100 + sequence,
    writerId: 'broker-1',
    epoch: 1,
    sequence,
    kind: 'data',
    present: [sequence + 1, sequence + 2],
    seals: [],
    floorMark: sequence + 1,
    frames: [frame(10 * sequence + 9, 1000)],
    ...parts,
  };
}

function withDeletes(walDeletes: WalDelete[]): History {
  return { ...history({ ops: validOps(), replicaLogs: [replica(1, true, VALID_LOG), replica(2, false, VALID_LOG.slice(0, 2))] }), walDeletes };
}

const reasons = (run: History): string[] =>
  check(run)
    .filter((v) => v.invariant === 'wal-gc-needed')
    .map((v) => v.message.split(':')[0]!);

describe('wal-gc-needed, hand-built', () => {
  test('covered objects deleted from the floor up, and late puts above a collected seal, pass', () => {
    expect(
      check(
        withDeletes([
          deletion(0, { present: [1, 2, 3], seals: [2] }),
          deletion(1, { present: [2, 3], seals: [2], frames: [frame(19, 0, true)] }), // a deleted incarnation
          deletion(3, { present: [2], seals: [2], floorMark: 2, frames: [frame(39, 0)] }), // above the seal, nothing left below it
        ]),
      ),
    ).toEqual([]);
  });

  test('a delete with no floor mark above it, and a seal deleted at or above the mark, are caught; a void seal below it is not', () => {
    expect(reasons(withDeletes([deletion(0, { floorMark: 0 })]))).toEqual(['no floor mark']);
    expect(reasons(withDeletes([deletion(4, { kind: 'seal', floorMark: 4, frames: [] })]))).toEqual(['seal deleted']);
    expect(reasons(withDeletes([deletion(4, { kind: 'seal', floorMark: 9, frames: [] })]))).toEqual([]);
  });

  test('a frame at or above the tier end of a live incarnation is caught', () => {
    expect(reasons(withDeletes([deletion(0, { frames: [frame(9, 9)] })]))).toEqual(['needed frame deleted']);
  });

  test('a delete above a hole, the highest of an unsealed stream, a seal, or above a seal too early are caught', () => {
    expect(reasons(withDeletes([deletion(2, { present: [0, 3] })]))).toEqual(['out of order']);
    expect(reasons(withDeletes([deletion(2, { present: [] })]))).toEqual(['highest of an unsealed stream']);
    expect(reasons(withDeletes([deletion(2, { kind: 'seal', present: [], floorMark: 0 })]))).toEqual(['seal deleted']);
    expect(reasons(withDeletes([deletion(3, { present: [1, 2], seals: [2], floorMark: 1 })]))).toEqual(['above a seal too early']);
  });
});

describe('wal-gc-needed, recorded at the store', () => {
  async function recorded(collect: (store: MemoryStore, world: World) => Promise<void>, kept: { recorder?: WalDeleteRecorder } = {}): Promise<WalDelete[]> {
    let recorder: WalDeleteRecorder | null = null;
    const store = new MemoryStore({ onDelete: (key, body) => recorder!.deleted(key, body) });
    recorder = new WalDeleteRecorder({ walStore: store, controlStore: store, nowMs: () => 0 });
    const stream = { writerId: 'broker-1', epoch: 1 };
    await putStream(store, stream, 4);
    await putSeal(store, stream, 4);
    await store.put(
      `control/tier/${TOPIC_ID}/0`,
      new TextEncoder().encode(
        JSON.stringify({
          leaderEpoch: 0,
          startOffset: 0,
          segments: [{ state: 'copied', baseOffset: 0, endOffset: 25, uploadId: 'u', leaderEpoch: 0, bytes: 1, maxTimestamp: 0, epochs: [], sections: {} }],
        }),
      ),
    );
    const world = new World();
    world.setTieredEnd(25);
    await collect(store, world);
    kept.recorder = recorder;
    return recorder.deletes;
  }

  test("the collector's deletes pass, and the records of what it deleted stay countable for ack-after-durable", async () => {
    const kept: { recorder?: WalDeleteRecorder } = {};
    const deletes = await recorded(async (store, world) => void (await gcOf(store, world, 2).collect()), kept);
    expect(deletes.map((d) => d.sequence)).toEqual([0, 1]);
    expect(check(withDeletes(deletes))).toEqual([]);
    const writes = new WalWrites();
    for (const { key, body } of kept.recorder!.deletedObjects) writes.settled(key, body, 5);
    const records = deletedWalRecords(kept.recorder!, writes, 0);
    expect(records.map((record) => record.value)).toEqual([...Array.from({ length: 10 }, (_, i) => `r0-${i}`), ...Array.from({ length: 10 }, (_, i) => `r10-${i}`)]);
    expect(records.every((record) => record.settledMs === 5)).toBe(true);
  });

  test('a collector that trusts a stale tier end is caught', async () => {
    const deletes = await recorded(async (store, world) => {
      world.setTieredEnd(1000); // what it believes, not what the store holds
      await new WalCollector({ store, prefix: '', writerId: 'broker-1', currentEpoch: () => 2, coverage: world, clock: new ManualClock(), random: new SeededRandom(1) }).collect();
    });
    expect(deletes.map((d) => d.sequence)).toEqual([0, 1, 2, 3]);
    expect(reasons(withDeletes(deletes))).toEqual(['needed frame deleted']);
  });

  test('a delete out of order is caught', async () => {
    const deletes = await recorded(async (store) => {
      await store.delete(walObjectKey('', { writerId: 'broker-1', epoch: 1 }, 1));
    });
    expect(reasons(withDeletes(deletes))).toEqual(['no floor mark', 'out of order']);
  });
});
