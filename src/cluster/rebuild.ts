import { FerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from '../replica/apply.ts';
import type { WalReader } from '../wal/reader.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ReadFrame } from '../wal/reader.ts';

/**
 * [C5] Rebuilds a partition's log from the WAL streams of its chain, oldest first, each up to
 * its seal: the same verified reads and the same apply rule as a follower, so the log becomes a
 * byte-identical copy of what the previous leaders made durable. Every stream must be sealed.
 */
export async function rebuildFromChain(reader: WalReader, log: PartitionLog, chain: readonly StreamId[], onFrame?: (frame: ReadFrame) => void): Promise<{ objectsRead: number; bytesApplied: number }> {
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
        bytesApplied += applyFrame(log, frame);
        onFrame?.(frame);
      }
    }
  }
  return { objectsRead, bytesApplied };
}
