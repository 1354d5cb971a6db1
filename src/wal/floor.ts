import type { ObjectStore } from '../store/object-store.ts';
import { parseWalObjectKey, type StreamId, streamPrefix } from './keys.ts';

/**
 * The WAL floor of a stream (docs/tier-protocol.md, Names): the lowest sequence still present.
 * GC deletes a stream's objects in sequence order only [G4], so everything from the floor up to
 * the first gap is the stream; below it, every frame is covered by the tier (GI1). One LIST; the
 * store lists in no particular order, so the minimum is taken. An empty stream's floor is 0.
 */
export async function streamFloor(store: ObjectStore, prefix: string, stream: StreamId): Promise<number> {
  return floorOf(await listSequences(store, prefix, stream));
}

/** The floor of a listing: its lowest sequence, 0 when it is empty. */
export function floorOf(sequences: ReadonlySet<number>): number {
  let floor: number | null = null;
  for (const sequence of sequences) if (floor === null || sequence < floor) floor = sequence;
  return floor ?? 0;
}

/** Every sequence number present in the stream (list order is unspecified, so collect a set). */
export async function listSequences(store: ObjectStore, prefix: string, stream: StreamId): Promise<Set<number>> {
  const sequences = new Set<number>();
  let token: string | undefined;
  do {
    const page = await store.list(streamPrefix(prefix, stream), token === undefined ? {} : { token });
    for (const object of page.objects) {
      const parsed = parseWalObjectKey(prefix, object.key);
      if (parsed !== null) sequences.add(parsed.sequence);
    }
    token = page.nextToken;
  } while (token !== undefined);
  return sequences;
}
