// The tier record (docs/tier-protocol.md [T1], [T3], [T5], [T7]; TI2, TI3): one partition's
// tiered history, changed by compare-and-swap by the leader that took it, so that a deposed
// leader can neither announce, nor commit, nor expire anything once a later epoch took it.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { type CopiedDetails, TierRecords, copiedSegments, tieredEnd } from '../../src/tier/tier-record.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC = idOf('t');
const DETAILS: CopiedDetails = { bytes: 100, maxTimestamp: 5, epochs: [{ epoch: 1, startOffset: 0 }], sections: { log: { position: 40, length: 60, checksum: '1' } } };

function records(seed = 1): TierRecords {
  return new TierRecords(new ControlStore(new MemoryStore({ latency: 's3-express', seed }), 'cluster'));
}

async function kindOf(promise: Promise<unknown>): Promise<string | null> {
  return promise.then(
    () => null,
    (error: unknown) => (isFerryError(error) ? error.kind : String(error)),
  );
}

/** Announces and commits [base, end) in `epoch`. */
async function tier(tiers: TierRecords, epoch: number, base: number, end: number, uploadId = `u-${base}`): Promise<void> {
  await tiers.announce(TOPIC, 0, epoch, { baseOffset: base, endOffset: end, uploadId });
  await tiers.commit(TOPIC, 0, epoch, uploadId, DETAILS);
}

test('a leader takes the record, and its copied segments move the tiered end', async () => {
  const tiers = records();
  expect(tieredEnd(await tiers.take(TOPIC, 0, 3))).toBe(0);
  await tier(tiers, 3, 0, 100);
  await tier(tiers, 3, 100, 250);
  const record = await tiers.read(TOPIC, 0);
  expect(tieredEnd(record)).toBe(250);
  expect(copiedSegments(record).map((s) => [s.baseOffset, s.endOffset])).toEqual([
    [0, 100],
    [100, 250],
  ]);
  // an upload must continue the tiered end, and one only announced does not count
  expect(await kindOf(tiers.announce(TOPIC, 0, 3, { baseOffset: 300, endOffset: 400, uploadId: 'gap' }))).toBe('InvalidOffsets');
  await tiers.announce(TOPIC, 0, 3, { baseOffset: 250, endOffset: 400, uploadId: 'pending' });
  expect(tieredEnd(await tiers.read(TOPIC, 0))).toBe(250);
});

test('once a later epoch took the record, the deposed leader announces, commits and expires nothing', async () => {
  const tiers = records();
  await tiers.take(TOPIC, 0, 3);
  await tier(tiers, 3, 0, 100);
  await tiers.announce(TOPIC, 0, 3, { baseOffset: 100, endOffset: 200, uploadId: 'zombie' });
  const taken = await tiers.take(TOPIC, 0, 4);
  expect(taken.segments.map((s) => s.uploadId)).toEqual(['u-0']); // the announced upload died with its leader
  expect(await kindOf(tiers.commit(TOPIC, 0, 3, 'zombie', DETAILS))).toBe('NotLeader');
  expect(await kindOf(tiers.announce(TOPIC, 0, 3, { baseOffset: 100, endOffset: 200, uploadId: 'again' }))).toBe('NotLeader');
  expect(await kindOf(tiers.expireBefore(TOPIC, 0, 3, 100))).toBe('NotLeader');
  expect(await kindOf(tiers.take(TOPIC, 0, 3))).toBe('NotLeader');
  const record = await tiers.read(TOPIC, 0);
  expect([record.leaderEpoch, tieredEnd(record), record.startOffset]).toEqual([4, 100, 0]);
  // the new leader's commit of an upload the old one announced is refused too: it is not announced any more
  expect(await kindOf(tiers.commit(TOPIC, 0, 4, 'zombie', DETAILS))).toBe('NotLeader');
});

test('a commit racing a take by the next leader lands before it or not at all', async () => {
  const outcomes = new Set<string | null>();
  for (let seed = 1; seed <= 30; seed++) {
    const tiers = records(seed);
    await tiers.take(TOPIC, 0, 3);
    await tiers.announce(TOPIC, 0, 3, { baseOffset: 0, endOffset: 100, uploadId: 'racing' });
    const [committed] = await Promise.all([kindOf(tiers.commit(TOPIC, 0, 3, 'racing', DETAILS)), tiers.take(TOPIC, 0, 4)]);
    const record = await tiers.read(TOPIC, 0);
    expect(record.leaderEpoch).toBe(4);
    expect(tieredEnd(record)).toBe(committed === null ? 100 : 0);
    expect(record.segments.some((s) => s.state === 'copying')).toBe(false);
    outcomes.add(committed);
  }
  expect([...outcomes].sort()).toEqual(['NotLeader', null].sort()); // both orders happened
});

test('a commit whose answer was lost is done once: the second finds it copied', async () => {
  const tiers = records();
  await tiers.take(TOPIC, 0, 1);
  await tiers.announce(TOPIC, 0, 1, { baseOffset: 0, endOffset: 10, uploadId: 'u' });
  await tiers.commit(TOPIC, 0, 1, 'u', DETAILS);
  expect(tieredEnd(await tiers.commit(TOPIC, 0, 1, 'u', DETAILS))).toBe(10);
});

test('retention raises the start and drops the segments wholly below it; the tiered end stays', async () => {
  const tiers = records();
  await tiers.take(TOPIC, 0, 1);
  await tier(tiers, 1, 0, 100);
  await tier(tiers, 1, 100, 200);
  await tier(tiers, 1, 200, 300);
  const record = await tiers.expireBefore(TOPIC, 0, 1, 200);
  expect([record.startOffset, tieredEnd(record)]).toEqual([200, 300]);
  expect(copiedSegments(record).map((s) => s.baseOffset)).toEqual([200]);
  expect(tieredEnd(await tiers.expireBefore(TOPIC, 0, 1, 100))).toBe(300); // never back
});
