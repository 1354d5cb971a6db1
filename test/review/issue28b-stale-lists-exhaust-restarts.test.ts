// Review of issue 28 item 1 (b2f75cd): the rebuilds of one scan share each stream's LIST for the
// whole scan (SharedWalReads.keep, PartitionHost.adoptTogether around PartitionClaims' pool). A
// shared LIST older than a WAL GC round has too low a floor; the rebuild finds the object gone and
// starts over [K2]. At b2f75cd the fresh LIST replaced only the LIST of the stream where it met the
// gone object: a chain whose streams were each collected a little since the shared LISTs cost one
// restart per stream, and with four such streams the rebuild ran out of its REBUILD_RESTARTS_MAX
// (3) restarts and the adoption failed, although GC ran once, before it started. Now a restart
// LISTs every stream itself (rebuildFromTierAndChain: listingFresh), so a stale shared LIST costs
// one restart, and builds the log a rebuild with its own LISTs builds.
//
// The objects the later rebuild finds gone are those nobody kept: an earlier rebuild of the scan
// that ran alone (holders = 1: a follow, which #replicate runs one at a time, or the last adoption
// of a pool) reads only its frames and keeps nothing, and in a large takeover the budget
// (SHARED_READS_BYTES_MAX) evicts the oldest objects first, i.e. the floors.
import { expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { floorMarkKey, type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { SharedWalReads } from '../../src/wal/shared-reads.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC_ID = idOf('t');
const PER_FRAME = 5;
/** Four dead leaders' streams, oldest first: the chain of both partitions. */
const CHAIN: StreamId[] = [1, 2, 3, 4].map((n) => ({ writerId: `broker-${n}`, epoch: 1 }));

/**
 * Stream k: object 0 holds partition 1's offsets [5k, 5k+5), object 1 partition 0's offsets
 * [5k, 5k+5), then the seal at 2. GC (below) collects object 0 of each once partition 1's tier covers it.
 */
async function chainStore(): Promise<MemoryStore> {
  const store = new MemoryStore();
  for (const [k, stream] of CHAIN.entries()) {
    for (const [sequence, partition] of [
      [0, 1],
      [1, 0],
    ] as const) {
      const base = k * PER_FRAME;
      const builder = new WalObjectBuilder({ kind: 'data', writerId: stream.writerId, epoch: stream.epoch, sequence, createdMs: 0 });
      const data = buildRecordBatch(
        Array.from({ length: PER_FRAME }, (_, i) => ({ value: `p${partition}-${base + i}`, timestamp: 0 })),
        { nowMs: 0, baseOffset: base },
      );
      builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition, leaderEpoch: 0, baseOffset: base, lastOffset: base + PER_FRAME - 1, data });
      await store.put(walObjectKey('', stream, sequence), concatBytes(builder.finish()));
    }
    await store.put(walObjectKey('', stream, 2), encodeSeal({ writerId: 'sealer', epoch: stream.epoch, sequence: 2, createdMs: 0 }));
  }
  return store;
}

/** [G4] One GC round: partition 1 is tiered to its end, so object 0 of every stream goes (mark first, then the delete). */
async function collectFloors(store: MemoryStore): Promise<void> {
  for (const stream of CHAIN) {
    await store.put(floorMarkKey('', stream, 1), new Uint8Array(0));
    await store.delete(walObjectKey('', stream, 0));
  }
}

function sharedOver(store: MemoryStore): SharedWalReads {
  return new SharedWalReads((wants) => new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants }, { clock: new ManualClock(), random: new SeededRandom(1) }));
}

const view = (shared: SharedWalReads, partition: number) => shared.view((t, p, id) => t === 't' && p === partition && id === TOPIC_ID);

/** Partition 1's rebuild (alone), one GC round, then partition 0's rebuild; `together` runs both in one keep, as one scan's adoptions. */
async function scan(together: boolean): Promise<{ restarts: number; logEndOffset: number } | Error> {
  const store = await chainStore();
  const shared = sharedOver(store);
  const run = async () => {
    const first = PartitionLog.open(tempDir());
    await shared.hold(() => rebuildFromTierAndChain(view(shared, 1), first, CHAIN, TOPIC_ID, async () => null));
    await collectFloors(store);
    const second = PartitionLog.open(tempDir());
    try {
      const outcome = await shared.hold(() => rebuildFromTierAndChain(view(shared, 0), second, CHAIN, TOPIC_ID, async () => null));
      return { restarts: outcome.restarts, logEndOffset: second.logEndOffset };
    } catch (error) {
      return error as Error;
    }
  };
  return together ? shared.keep(run) : run();
}

test('a rebuild later in a scan, after one GC round collected the floor of each of its four streams, rebuilds as one with its own LISTs does, after one restart', async () => {
  const alone = await scan(false);
  expect(alone).toEqual({ restarts: 0, logEndOffset: CHAIN.length * PER_FRAME }); // every frame of partition 0 is still in the chain
  const inOneScan = await scan(true);
  // At b2f75cd: WalPrefixCollectedError after REBUILD_RESTARTS_MAX restarts (one per stale shared LIST).
  expect(inOneScan instanceof Error ? `${inOneScan.name}: ${inOneScan.message}` : inOneScan).toEqual({ restarts: 1, logEndOffset: CHAIN.length * PER_FRAME });
});

// The same shared LIST, taken while a chain's stream was still empty and unsealed (a follow of
// another partition in the scan read the chain between a claim's compare-and-swap and its seal:
// #startFollowing rebuilds from chain.slice(0, -1), "sealed when it took over", which fails then and
// is retried), is what a later adoption of the scan starts that stream from. Its writer wrote objects
// 0..3 since, GC collected 0 and 1 (mark 2), and the stream was sealed at 4. The rebuild reads
// from the empty LIST's floor 0 and finds it gone. At b2f75cd, the LIST having listed nothing
// (`listedAny` in missingObject), it took it for an unsealed stream: a plain Storage error, not
// even a restart. Now gone is gone: it starts over with its own LIST, reads 2..3 and the seal.
const LIVE: StreamId = { writerId: 'broker-9', epoch: 2 };

async function writeLive(store: MemoryStore, sequences: readonly number[]): Promise<void> {
  for (const sequence of sequences) {
    const base = sequence * PER_FRAME;
    const builder = new WalObjectBuilder({ kind: 'data', writerId: LIVE.writerId, epoch: LIVE.epoch, sequence, createdMs: 0 });
    const data = buildRecordBatch(
      Array.from({ length: PER_FRAME }, (_, i) => ({ value: `p0-${base + i}`, timestamp: 0 })),
      { nowMs: 0, baseOffset: base },
    );
    builder.addFrame({ topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 0, baseOffset: base, lastOffset: base + PER_FRAME - 1, data });
    await store.put(walObjectKey('', LIVE, sequence), concatBytes(builder.finish()));
  }
}

async function emptyThenWrittenCollectedSealed(together: boolean): Promise<{ restarts: number; logStartOffset: number; logEndOffset: number } | string> {
  const store = new MemoryStore();
  const shared = sharedOver(store);
  const tiered = { offset: 2 * PER_FRAME, epochs: [], producers: null }; // what GC's round below went by
  let tier: typeof tiered | null = null;
  const run = async () => {
    const follower = PartitionLog.open(tempDir());
    // The follow's rebuild: the stream is empty and not sealed yet, which it finds out (and is retried later).
    await shared.hold(() => rebuildFromTierAndChain(view(shared, 1), follower, [LIVE], TOPIC_ID, async () => null)).catch(() => {});
    await writeLive(store, [0, 1, 2, 3]);
    tier = tiered;
    await store.put(floorMarkKey('', LIVE, 2), new Uint8Array(0));
    await store.delete(walObjectKey('', LIVE, 0));
    await store.delete(walObjectKey('', LIVE, 1));
    await store.put(walObjectKey('', LIVE, 4), encodeSeal({ writerId: 'sealer', epoch: LIVE.epoch, sequence: 4, createdMs: 0 }));
    const leader = PartitionLog.open(tempDir());
    try {
      const outcome = await shared.hold(() => rebuildFromTierAndChain(view(shared, 0), leader, [LIVE], TOPIC_ID, async () => tier));
      return { restarts: outcome.restarts, logStartOffset: leader.logStartOffset, logEndOffset: leader.logEndOffset };
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };
  return together ? shared.keep(run) : run();
}

test('a rebuild later in a scan whose stream was empty when the scan first LISTed it rebuilds as one with its own LIST does, after one restart', async () => {
  expect(await emptyThenWrittenCollectedSealed(false)).toEqual({ restarts: 0, logStartOffset: 2 * PER_FRAME, logEndOffset: 4 * PER_FRAME });
  // At b2f75cd: "FerryError: WAL stream broker-9/2 has no object 0 and no seal before it: seal it before rebuilding".
  expect(await emptyThenWrittenCollectedSealed(true)).toEqual({ restarts: 1, logStartOffset: 2 * PER_FRAME, logEndOffset: 4 * PER_FRAME });
});
