import type { ObjectStore } from '../store/object-store.ts';
import { FerryError } from '../errors.ts';
import { floorMarkKey, floorMarksPrefix, parseFloorMarkKey, parseWalObjectKey, type StreamId, streamPrefix, walObjectKey } from './keys.ts';

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

/**
 * Every sequence number of the stream at or above its highest floor mark (list order is
 * unspecified, so collect a set). Below the mark is what GC collected or is collecting, and a void
 * seal ([F2]) a sealer that died left there: no reader may take it for the stream's end, so none
 * sees it. The marks come in the same LIST (they sit beside the stream's objects).
 */
export async function listSequences(store: ObjectStore, prefix: string, stream: StreamId): Promise<Set<number>> {
  const { sequences, mark } = await listWithMark(store, prefix, stream);
  for (const sequence of sequences) if (sequence < mark) sequences.delete(sequence);
  return sequences;
}

/** One LIST of a stream: every sequence present (below the mark too), with their sizes, and its highest floor mark (0: none). */
export async function listWithMark(store: ObjectStore, prefix: string, stream: StreamId): Promise<{ sequences: Set<number>; sizes: Map<number, number>; mark: number }> {
  const sequences = new Set<number>();
  const sizes = new Map<number, number>();
  let mark = 0;
  let token: string | undefined;
  do {
    const page = await store.list(streamPrefix(prefix, stream), token === undefined ? {} : { token });
    for (const object of page.objects) {
      const parsed = parseWalObjectKey(prefix, object.key);
      if (parsed !== null && parsed.stream.writerId === stream.writerId && parsed.stream.epoch === stream.epoch) {
        sequences.add(parsed.sequence);
        sizes.set(parsed.sequence, object.size);
      }
      mark = Math.max(mark, parseFloorMarkKey(prefix, object.key)?.floor ?? 0);
    }
    token = page.nextToken;
  } while (token !== undefined);
  return { sequences, sizes, mark };
}

/**
 * Listings a seal takes before giving up while WAL GC keeps deleting under them. Each retry means
 * GC deleted the floor during a LIST of several pages; GC deletes one object at a time, so a
 * second listing, taken in milliseconds, nearly always holds.
 */
const SEAL_LISTING_TRIES = 10;

/**
 * A listing a seal can trust [F1]: a hole in it below a present object is a real one (an upload
 * still in flight, [W3]), not objects WAL GC deleted between the pages of the LIST, which would
 * put the seal below objects the writer acknowledged. GC deletes from the floor up, one at a time
 * [G4], so if the listing's floor object still exists after the LIST, nothing at or above it was
 * deleted meanwhile. The check (one HEAD) is made only when the listing has such a hole.
 */
export async function listSequencesToSeal(store: ObjectStore, prefix: string, stream: StreamId): Promise<Set<number>> {
  for (let tries = 1; ; tries++) {
    const present = await listSequences(store, prefix, stream);
    const floor = floorOf(present);
    if (!hasHoleBelowPresent(present, floor) || (await store.head(walObjectKey(prefix, stream, floor))) !== null) return present;
    if (tries >= SEAL_LISTING_TRIES)
      throw new FerryError('Storage', `WAL stream ${stream.writerId}/${stream.epoch}: GC deleted its floor during each of ${tries} listings; sealing it is tried again later`);
  }
}

/** Whether the first free slot from `floor` lies below some present sequence. */
function hasHoleBelowPresent(present: ReadonlySet<number>, floor: number): boolean {
  let firstFree = floor;
  while (present.has(firstFree)) firstFree++;
  for (const sequence of present) if (sequence > firstFree) return true;
  return false;
}

/**
 * The highest floor mark of a stream (0: none). GC [G4] puts the mark `f` before it deletes any
 * object below `f`, and never marks above a seal or the object it keeps, so a seal below the
 * highest mark sits in a collected prefix: its slot was the writer's, freed by GC since the
 * sealer listed (review finding 1). Such a seal is void ([F2]): it fenced nothing.
 */
export async function highestFloorMark(store: ObjectStore, prefix: string, stream: StreamId): Promise<number> {
  let highest = 0;
  for (const key of await listKeys(store, floorMarksPrefix(prefix, stream))) highest = Math.max(highest, parseFloorMarkKey(prefix, key)?.floor ?? 0);
  return highest;
}

/** [G4] Marks that every object below `floor` is collected: put before the first of them is deleted. */
export async function markFloor(store: ObjectStore, prefix: string, stream: StreamId, floor: number): Promise<void> {
  await store.put(floorMarkKey(prefix, stream, floor), new Uint8Array(0));
}

/** Deletes the marks below `floor` (only the highest counts; it was put before these go). */
export async function dropFloorMarksBelow(store: ObjectStore, prefix: string, stream: StreamId, floor: number): Promise<void> {
  for (const key of await listKeys(store, floorMarksPrefix(prefix, stream))) {
    const mark = parseFloorMarkKey(prefix, key);
    if (mark !== null && mark.floor < floor) await store.delete(key);
  }
}

async function listKeys(store: ObjectStore, keyPrefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await store.list(keyPrefix, token === undefined ? {} : { token });
    for (const object of page.objects) keys.push(object.key);
    token = page.nextToken;
  } while (token !== undefined);
  return keys;
}
