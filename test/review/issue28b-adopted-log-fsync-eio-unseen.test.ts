// Review of issue 28 item 2 (04d2c03): adopted logs were written through diskWithSync(disk,
// noFileSync) for their whole life. docs/cluster-protocol.md [C1] says a broker whose "local log
// writes fail (a full disk, an I/O error)" says storageFailing, leads nothing and follows nothing,
// as Kafka takes a failed log directory offline. Linux reports a disk's write-back I/O errors
// through fsync/fdatasync (EIO), not through write(2) into the page cache; the fsyncs of an adopted
// log (each roll syncs the segment it seals and its indexes, the leader-epoch and producer-state
// files, a new segment's directory) are where a cluster broker running with the WAL's flush 'none'
// finds such a disk. With no barriers, an EIO was never seen: the broker kept leading and following
// on a disk that drops what it writes, and never stepped aside. Now an adopted log skips its
// barriers only while it is prepared and rebuilt (BarriersOnceArmed), and has them once it serves.
//
// This proves the loss of detection only; it is not an acknowledged record lost (acks wait for
// the WAL, and the tierer checks each batch's CRC32C before it uploads it).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { idOf } from '../support/topic-ids.ts';

test('an adopted partition whose disk fails its fsyncs with EIO leaves the engine storage-failing', async () => {
  const disk = new SimDisk({ random: new SeededRandom(1) });
  const engine = await Engine.open({
    directory: '/data',
    disk,
    clock: new ManualClock(),
    cluster: managedBy(),
    log: { flush: { kind: 'none' }, segmentBytes: 1024 }, // the WAL's default flush; small segments roll often
    wal: { store: new MemoryStore(), writerId: 'b1', config: { uploadIntervalMs: 1 } },
  });
  try {
    await engine.adoptPartition('t', idOf('t'), 0, 1, async () => {});
    disk.failNextSyncs(1_000_000, 'EIO'); // the disk drops every write back from now on
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      outcomes.push(
        await engine.produce('t', [{ value: 'x'.repeat(200) }], { partition: 0, acks: 1 }).then(
          () => 'ok',
          (error: unknown) => String(error),
        ),
      );
    }
    expect(outcomes.filter((outcome) => outcome !== 'ok').length).toBeGreaterThan(0); // a roll's fsync met the EIO
    expect(engine.storageFailing).toBe(true); // [C1]: the broker record would say storageFailing
  } finally {
    await engine.close().catch(() => {});
  }
});
