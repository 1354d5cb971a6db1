import type { ObjectStore } from '../../store/object-store.ts';
import { parseWalObjectKey, type StreamId, streamPrefix } from '../keys.ts';

/** One LIST of a stream: every sequence present and its size (list order is unspecified). */
export interface StreamListing {
  readonly sizes: ReadonlyMap<number, number>;
  /** The WAL floor: the lowest sequence present; null for an empty stream. */
  readonly floor: number | null;
}

export async function listStream(store: ObjectStore, prefix: string, stream: StreamId): Promise<StreamListing> {
  const sizes = new Map<number, number>();
  let token: string | undefined;
  do {
    const page = await store.list(streamPrefix(prefix, stream), token === undefined ? {} : { token });
    for (const object of page.objects) {
      const parsed = parseWalObjectKey(prefix, object.key);
      if (parsed !== null && parsed.stream.writerId === stream.writerId && parsed.stream.epoch === stream.epoch) sizes.set(parsed.sequence, object.size);
    }
    token = page.nextToken;
  } while (token !== undefined);
  let floor: number | null = null;
  for (const sequence of sizes.keys()) if (floor === null || sequence < floor) floor = sequence;
  return { sizes, floor };
}
