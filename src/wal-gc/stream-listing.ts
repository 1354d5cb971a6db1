import type { ObjectStore } from '../store/object-store.ts';
import { listWithMark } from '../wal/floor.ts';
import type { StreamId } from '../wal/keys.ts';

/** One LIST of a stream: every sequence at or above its highest floor mark and its size (list order is unspecified). */
export interface StreamListing {
  readonly sizes: ReadonlyMap<number, number>;
  /** The WAL floor: the lowest sequence at or above the mark; null when none is. */
  readonly floor: number | null;
  /** What lies below the highest floor mark, in sequence order: collected already (a pass stopped part way), or a void seal a sealer left ([F2]). */
  readonly belowMark: readonly { readonly sequence: number; readonly sizeBytes: number }[];
}

export async function listStream(store: ObjectStore, prefix: string, stream: StreamId): Promise<StreamListing> {
  const { sizes: all, mark } = await listWithMark(store, prefix, stream);
  const sizes = new Map<number, number>();
  const belowMark: { sequence: number; sizeBytes: number }[] = [];
  for (const [sequence, sizeBytes] of all) {
    if (sequence < mark) belowMark.push({ sequence, sizeBytes });
    else sizes.set(sequence, sizeBytes);
  }
  belowMark.sort((a, b) => a.sequence - b.sequence);
  let floor: number | null = null;
  for (const sequence of sizes.keys()) if (floor === null || sequence < floor) floor = sequence;
  return { sizes, floor, belowMark };
}
