import type { WalDelete } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';

export const WAL_GC_NEEDED = 'wal-gc-needed';

/** Violations about a stream rather than one partition: named by the stream, no incarnation. */
const STREAM_WIDE = -1;

/**
 * wal-gc-needed (docs/tier-protocol.md GI1, GI2, [G4], [G6]), over every WAL object delete in the
 * store's order, judged against the store as it was at that moment:
 * - a seal is never deleted ([G5], which would, is not built), unless it is void: below the
 *   stream's highest floor mark, a sealer's slot GC had collected ([F2]), deleted by a sealer;
 * - a data object below its seal or in the run GC collects is deleted only below a floor mark
 *   put before ([G4]: what makes a seal in a collected slot void rather than the stream's end);
 * - an object above a seal goes only once no data object is left below the seal ([G6]);
 * - any other object goes only from the stream's floor (nothing of the stream below it is left:
 *   never above a hole, GI2), never as the highest object of its stream ([G4]: the next sequence
 *   is present), and only if each of its frames is covered: its incarnation was deleted, or its
 *   last offset lies below TE of its partition's tier record as the store held it.
 * Not judged here: GI1's in-sync followers (the harness sees no leader's follower state).
 */
export function checkWalGcNeeded(index: HistoryIndex, out: ViolationList): void {
  for (const deleted of index.history.walDeletes ?? []) checkDelete(deleted, out);
}

function checkDelete(deleted: WalDelete, out: ViolationList): void {
  const stream = `WAL ${deleted.writerId}/${deleted.epoch}`;
  const where: PartitionRef = { topic: stream, incarnation: STREAM_WIDE, partition: -1 };
  const object = `object ${deleted.sequence} of ${stream}, deleted at ${deleted.atMs} ms`;
  if (deleted.kind === 'seal') {
    if (deleted.sequence >= deleted.floorMark)
      out.add(WAL_GC_NEEDED, where, 'seal deleted', deleted.sequence, `${object} was its seal (the highest floor mark was ${deleted.floorMark})`, deleted.atMs);
    return;
  }
  const sealBelow = deleted.seals.find((seal) => seal < deleted.sequence && seal >= deleted.floorMark); // a void seal is no seal
  if (sealBelow !== undefined) {
    const dataBelowSeal = deleted.present.find((sequence) => sequence < sealBelow);
    if (dataBelowSeal !== undefined)
      out.add(
        WAL_GC_NEEDED,
        where,
        'above a seal too early',
        deleted.sequence,
        `${object} lies above the seal at ${sealBelow}, but object ${dataBelowSeal} below the seal was still there`,
        deleted.atMs,
      );
    return;
  }
  if (deleted.sequence >= deleted.floorMark)
    out.add(WAL_GC_NEEDED, where, 'no floor mark', deleted.sequence, `${object} with the stream's highest floor mark at ${deleted.floorMark}, not above it`, deleted.atMs);
  const below = deleted.present.find((sequence) => sequence < deleted.sequence);
  if (below !== undefined) out.add(WAL_GC_NEEDED, where, 'out of order', deleted.sequence, `${object} while object ${below} below it was still there (GI2: from the floor up)`, deleted.atMs);
  if (!deleted.present.includes(deleted.sequence + 1))
    out.add(WAL_GC_NEEDED, where, 'highest of an unsealed stream', deleted.sequence, `${object} with no object ${deleted.sequence + 1} after it and no seal below it`, deleted.atMs);
  for (const frame of deleted.frames) {
    if (frame.incarnationDeleted || frame.lastOffset < frame.tieredEnd) continue;
    const partition: PartitionRef = { topic: frame.topic, incarnation: STREAM_WIDE, partition: frame.partition };
    out.add(
      WAL_GC_NEEDED,
      partition,
      'needed frame deleted',
      frame.lastOffset,
      `${object} held offsets up to ${frame.lastOffset} of ${frame.topic}-${frame.partition} (topic id ${frame.topicId}), at or above the tier end ${frame.tieredEnd}, of an incarnation with no deletion record (DI1)`,
      deleted.atMs,
    );
  }
}
