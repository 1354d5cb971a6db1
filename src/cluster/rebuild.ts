import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from '../replica/apply.ts';
import type { WalReader } from '../wal/reader.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ReadFrame } from '../wal/reader.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';

/**
 * [C5] Rebuilds a partition's log from the WAL streams of its chain, oldest first, each up to
 * its seal: the same verified reads and the same apply rule as a follower, so the log becomes a
 * byte-identical copy of what the previous leaders made durable. Every stream must be sealed.
 * Only frames of the topic incarnation `topicId` are applied and handed to `onFrame`: a stream
 * also carries the frames of any earlier incarnation of the topic's name (DESIGN.md contract 10).
 */
export async function rebuildFromChain(reader: WalReader, log: PartitionLog, chain: readonly StreamId[], topicId: Uuid, onFrame?: (frame: ReadFrame) => void): Promise<{ objectsRead: number; bytesApplied: number }> {
  let objectsRead = 0;
  let bytesApplied = 0;
  for (const stream of chain) {
    for (let sequence = 0; ; sequence++) {
      const read = await reader.read(stream, sequence);
      if (read.kind === 'seal') break;
      if (read.kind === 'absent') {
        throw new FerryError('Storage', `WAL stream ${stream.writerId}/${stream.epoch} has no object ${sequence} and no seal before it: seal it before rebuilding`);
      }
      objectsRead++;
      for (const frame of read.frames) {
        if (frame.entry.topicId !== topicId && !regressed('topic-incarnations-mixed')) continue;
        bytesApplied += applyFrame(log, frame, topicId);
        onFrame?.(frame);
      }
    }
  }
  return { objectsRead, bytesApplied };
}
