// The takeover planner (docs/cluster-protocol.md [C3]-[C5]) on its own: from a partition record
// and this broker's current stream to what to seal, what to rebuild from, and the next record.
import { expect, test } from 'bun:test';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { planTakeover } from '../../src/cluster/takeover.ts';
import { sameStream } from '../../src/wal/keys.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';

const T = idOf('t');
/** The incarnation of T that most tests claim for: the name's first, so its epochs start at 0. */
const FIRST = { topicId: T, leaderEpochBase: 0 };

const A0: StreamId = { writerId: 'broker-1', epoch: 0 };
const A1: StreamId = { writerId: 'broker-1', epoch: 1 };
const A2: StreamId = { writerId: 'broker-1', epoch: 2 };
const B0: StreamId = { writerId: 'broker-2', epoch: 0 };

function claim(record: PartitionRecord | null, stream: StreamId, nodeId = 1, incarnation = FIRST) {
  const plan = planTakeover(record, nodeId, stream, incarnation);
  if (plan.kind !== 'claim') throw new Error(`expected a claim, got ${plan.kind}`);
  return plan;
}

test('a partition never led: nothing to seal or rebuild, epoch 0, a chain of this stream', () => {
  expect(claim(null, A0)).toEqual({ kind: 'claim', seal: [], rebuildFrom: [], settled: null, next: { topicId: T, leader: 1, leaderEpoch: 0, chain: [A0] } });
});

test('a restarted broker whose record still names it appends its new stream and rebuilds from the old one (finding 3)', () => {
  const plan = claim({ topicId: T, leader: 1, leaderEpoch: 0, chain: [A0] }, A1);
  expect(plan.seal).toEqual([A0]);
  expect(plan.rebuildFrom).toEqual([A0]);
  expect(plan.next).toEqual({ topicId: T, leader: 1, leaderEpoch: 1, chain: [A0, A1] });
  // ...and the restart after that rebuilds from both epochs, not from epoch 0 only.
  expect(claim(plan.next, A2).rebuildFrom).toEqual([A0, A1]);
});

test("re-claiming keeps this broker's own earlier streams in the rebuild, in chain order (finding 4)", () => {
  const plan = claim({ topicId: T, leader: 2, leaderEpoch: 2, chain: [A0, B0, A0] }, A1);
  expect(plan.rebuildFrom).toEqual([A0, B0, A0]);
  expect(plan.seal).toEqual([A0, B0]); // once each
  expect(plan.next).toEqual({ topicId: T, leader: 1, leaderEpoch: 3, chain: [A0, B0, A0, A1] });
});

test('a current stream followed by another in the chain was sealed: the writer needs a new epoch first', () => {
  expect(planTakeover({ topicId: T, leader: 2, leaderEpoch: 1, chain: [A0, B0] }, 1, A0, FIRST)).toEqual({ kind: 'stream-sealed' });
  expect(planTakeover({ topicId: T, leader: 2, leaderEpoch: 2, chain: [A0, B0, A0] }, 1, A0, FIRST)).toEqual({ kind: 'stream-sealed' });
});

test('a record that already ends in the current stream is claimed again without appending it twice', () => {
  const plan = claim({ topicId: T, leader: 1, leaderEpoch: 4, chain: [B0, A0] }, A0);
  expect(plan.next.chain).toEqual([B0, A0]);
  expect(plan.next.leaderEpoch).toBe(5);
  expect(plan.rebuildFrom).toEqual([B0]);
  expect(plan.seal).toEqual([B0]);
});

test("a record of another topic incarnation (a deleted topic's leftover) is replaced whole: nothing sealed, rebuilt or inherited", () => {
  const leftover: PartitionRecord = { topicId: idOf('t', 1), leader: 2, leaderEpoch: 6, chain: [B0] };
  expect(claim(leftover, A0)).toEqual({ kind: 'claim', seal: [], rebuildFrom: [], settled: null, next: { topicId: T, leader: 1, leaderEpoch: 0, chain: [A0] } });
});

test('issue 9 finding 5: a re-created topic starts at its base epoch, above every epoch of the deleted incarnation, whether its record is absent or a leftover', () => {
  const again = { topicId: T, leaderEpochBase: 7 };
  expect(claim(null, A0, 1, again).next).toEqual({ topicId: T, leader: 1, leaderEpoch: 7, chain: [A0] });
  const leftover: PartitionRecord = { topicId: idOf('t', 1), leader: 2, leaderEpoch: 6, chain: [B0] };
  expect(claim(leftover, A0, 1, again).next).toEqual({ topicId: T, leader: 1, leaderEpoch: 7, chain: [A0] });
  // Within the incarnation, epochs go on one up from the record, as before.
  expect(claim({ topicId: T, leader: 2, leaderEpoch: 7, chain: [B0] }, A0, 1, again).next.leaderEpoch).toBe(8);
});

test('property: over random chains the plan keeps every invariant of [C3]-[C5]', () => {
  const random = new SeededRandom(20261201);
  const streams: StreamId[] = [];
  for (let writer = 1; writer <= 3; writer++) for (let epoch = 0; epoch < 3; epoch++) streams.push({ writerId: `broker-${writer}`, epoch });
  for (let run = 0; run < 5000; run++) {
    const chain = Array.from({ length: random.nextInt(7) }, () => streams[random.nextInt(streams.length)]!);
    const leaderEpochBase = random.nextInt(3) === 0 ? 0 : random.nextInt(100);
    // Absent, a leftover of another incarnation, or one of this incarnation (whose epochs start at its base).
    const shape = chain.length === 0 && random.next() < 0.5 ? 'absent' : random.nextInt(4) === 0 ? 'leftover' : 'own';
    const record: PartitionRecord | null =
      shape === 'absent' ? null : { topicId: shape === 'own' ? T : idOf('t', 1), leader: 1 + random.nextInt(3), leaderEpoch: (shape === 'own' ? leaderEpochBase : 0) + random.nextInt(50), chain };
    const current = streams[random.nextInt(streams.length)]!;
    const plan = planTakeover(record, 7, current, { topicId: T, leaderEpochBase });
    if (shape !== 'own') {
      // Never led in this incarnation: nothing inherited, and the first epoch is the incarnation's base [L4].
      expect(plan).toEqual({ kind: 'claim', seal: [], rebuildFrom: [], settled: null, next: { topicId: T, leader: 7, leaderEpoch: leaderEpochBase, chain: [current] } });
      continue;
    }
    const last = chain.length - 1;
    // Anywhere but at the very end, the current stream was followed by a claim that sealed it.
    if (chain.some((s, i) => sameStream(s, current) && i < last)) {
      expect(plan.kind).toBe('stream-sealed');
      continue;
    }
    expect(plan.kind).toBe('claim');
    if (plan.kind !== 'claim') continue;
    const withoutCurrent = chain.length > 0 && sameStream(chain[last]!, current) ? chain.slice(0, -1) : chain;
    // The next record: this broker, one epoch up, the old chain with the current stream once at its end.
    expect(plan.next.leader).toBe(7);
    expect(plan.next.leaderEpoch).toBe(record!.leaderEpoch + 1);
    expect(plan.next.chain).toEqual([...withoutCurrent, current]);
    expect(plan.next.chain.filter((s) => sameStream(s, current)).length).toBe(1);
    // Rebuild from everything the chain names before the current stream, in order, repeats included.
    expect(plan.rebuildFrom).toEqual(withoutCurrent);
    // Seal every other stream of the chain exactly once, never the current one.
    for (const s of withoutCurrent) expect(plan.seal.filter((t) => sameStream(s, t)).length).toBe(1);
    expect(plan.seal.length).toBe(new Set(withoutCurrent.map((s) => `${s.writerId}/${s.epoch}`)).size);
    expect(plan.seal.some((s) => sameStream(s, current))).toBe(false);
  }
});

test("DeleteRecords' log start goes on with every claim of the incarnation, and not into another incarnation", () => {
  const plan = claim({ topicId: T, leader: 2, leaderEpoch: 3, chain: [B0], logStartOffset: 42 }, A0);
  expect(plan.next).toEqual({ topicId: T, leader: 1, leaderEpoch: 4, chain: [B0, A0], logStartOffset: 42 });
  expect(claim(plan.next, A1).next.logStartOffset).toBe(42);
  const leftover: PartitionRecord = { topicId: idOf('t', 1), leader: 2, leaderEpoch: 6, chain: [B0], logStartOffset: 42 };
  expect(claim(leftover, A0).next.logStartOffset).toBeUndefined();
});
