import { isStoreError } from '../store/errors.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { decodeHeader, encodeSeal } from './format.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from './writer.ts';
import { FerryError } from '../errors.ts';
import { floorOf, highestFloorMark, listSequences, listSequencesToSeal } from './floor.ts';
import { parseWalObjectKey, type StreamId, walObjectKey, walRoot } from './keys.ts';

export { listSequences } from './floor.ts';

export interface SealResult {
  /** The sequence the seal took: every object of the stream below it is complete. */
  readonly sealSequence: number;
  /** False when another successor's seal was found at the slot: one seal per stream [F3]. */
  readonly sealedHere: boolean;
}

/**
 * Closes a predecessor's stream (docs/wal-protocol.md, steps F1-F4): find the first free slot,
 * put a seal there if absent, and move up a slot whenever the predecessor got there first. A
 * slot taken by another successor's seal ends the race: the stream is sealed, and a second seal
 * above it is never written.
 */
export async function sealStream(store: ObjectStore, prefix: string, stream: StreamId, sealer: { writerId: string; nowMs: number }): Promise<SealResult> {
  for (let tries = 1; ; tries++) {
    const sealed = await sealAbove(store, prefix, stream, sealer, await listSequencesToSeal(store, prefix, stream));
    if (sealed !== null) return sealed;
    checkVoidTries(stream, tries);
  }
}

/**
 * Fresh listings a seal takes while each seal it puts or finds turns out void (WAL GC freed its
 * slot after the listing); each one means the live writer wrote and GC collected a whole run of
 * objects during one seal attempt: two in a row are already unlikely.
 */
const VOID_SEAL_TRIES = 10;

function checkVoidTries(stream: StreamId, tries: number): void {
  if (tries >= VOID_SEAL_TRIES)
    throw new FerryError('Storage', `WAL stream ${stream.writerId}/${stream.epoch}: ${tries} seals in a row landed in a prefix WAL GC had collected; sealing it is tried again later`);
}

/**
 * [F2] A seal below the stream's highest floor mark is void: its slot was the live writer's, and GC
 * collected it after the sealer listed, so the seal sits below objects the writer acknowledged and
 * fences nothing (review finding 1). Whoever finds one deletes it (seals are immutable otherwise)
 * and seals again from a fresh listing. GC marks a floor before it deletes below it and never marks
 * above a seal or a hole, so a seal put at a slot free since the listing is never void.
 */
async function voidedSeal(store: ObjectStore, prefix: string, stream: StreamId, sequence: number): Promise<boolean> {
  if ((await highestFloorMark(store, prefix, stream)) <= sequence) return false;
  await store.delete(walObjectKey(prefix, stream, sequence));
  return true;
}

/**
 * [F1]-[F4] from the listing `present` (every sequence from its floor to its first gap exists:
 * listSequencesToSeal). A slot found
 * taken is looked at, never assumed to be data: that is how a seal written since the listing is
 * found. So a caller that checked `present` for a seal must pass that same listing, not list again:
 * a fresh listing would count a rival's newer seal as data and seal above it.
 */
async function sealAbove(store: ObjectStore, prefix: string, stream: StreamId, sealer: { writerId: string; nowMs: number }, present: Set<number>): Promise<SealResult | null> {
  // [F1] from the stream's floor, not from 0: GC [G4] deletes a prefix, and a seal in that hole
  // would sit below the live writer's objects, fence nothing, and be taken for the stream's end.
  let slot = floorOf(present);
  for (;;) {
    while (present.has(slot)) slot++; // [F1] first free slot: everything from the floor below it exists
    const body = encodeSeal({ writerId: sealer.writerId, epoch: stream.epoch, sequence: slot, createdMs: sealer.nowMs });
    try {
      // [F2]; judged by its bytes after an ambiguous answer (docs/cluster-protocol.md CW2): the seal
      // names its sealer, and two with one writer id writing the same seal at once is harmless.
      await store.put(walObjectKey(prefix, stream, slot), body, { ifNoneMatch: '*' });
    } catch (error) {
      if (!isStoreError(error, 'PreconditionFailed')) throw error;
      // [F3] someone wrote the slot in between: another successor's seal (we lost the race to
      // seal, the stream is closed all the same, unless that seal is void), or the predecessor's
      // data (try the next slot); gone again (GC took it, or a void seal was deleted): list afresh.
      const kind = await kindUnlessGone(store, walObjectKey(prefix, stream, slot));
      if (kind === null) return null;
      if (kind === 'seal') return (await voidedSeal(store, prefix, stream, slot)) ? null : { sealSequence: slot, sealedHere: false };
      present.add(slot);
      continue;
    }
    return (await voidedSeal(store, prefix, stream, slot)) ? null : { sealSequence: slot, sealedHere: true }; // [F4]
  }
}

/** Header bytes read to learn an object's kind: the fixed fields plus the longest writer id. */
const HEADER_PROBE_BYTES = 512;
/**
 * How far below a stream's end a seal is looked for. Uploads the fenced writer had in flight may
 * land above the seal [W6], at most its upload concurrency minus one (8 by default). Costs up to
 * this many header GETs to seal a stream that was not sealed yet; one when it ends in its seal.
 */
const SEAL_SEARCH_OBJECTS = DEFAULT_WAL_WRITER_CONFIG.maxInFlight;

/** Seals `stream` unless a seal already closes it (one seal per stream); returns the seal's sequence. */
export async function ensureSealed(store: ObjectStore, prefix: string, stream: StreamId, sealer: { writerId: string; nowMs: number }): Promise<number> {
  for (let tries = 1; ; tries++) {
    const sealed = await ensureSealedFrom(store, prefix, stream, sealer, await listSequencesToSeal(store, prefix, stream));
    if (sealed !== null) return sealed;
    checkVoidTries(stream, tries);
  }
}

/** ensureSealed from one listing; null when a seal found or put there was void (list afresh). */
async function ensureSealedFrom(store: ObjectStore, prefix: string, stream: StreamId, sealer: { writerId: string; nowMs: number }, sequences: Set<number>): Promise<number | null> {
  const floor = floorOf(sequences); // [F1] a collected prefix [G4] is not the stream's end
  let firstFree = floor;
  while (sequences.has(firstFree)) firstFree++;
  for (let sequence = firstFree - 1; sequence >= Math.max(floor, firstFree - SEAL_SEARCH_OBJECTS); sequence--) {
    // An object gone since the listing was data GC collected (seals stay, void ones aside): look further down.
    if ((await kindUnlessGone(store, walObjectKey(prefix, stream, sequence))) === 'seal') return (await voidedSeal(store, prefix, stream, sequence)) ? null : sequence;
  }
  return (await sealAbove(store, prefix, stream, sealer, sequences))?.sealSequence ?? null; // the listing searched, not a new one [F3]
}

/**
 * Seals every earlier epoch of `writerId` that is not sealed yet, so a follower that reads them
 * in order always meets a seal before the next epoch (a crash can leave an epoch unsealed).
 * `epochs`: the writer's epochs as the caller just listed them (listEpochs), to spare a LIST.
 */
export async function sealEarlierEpochs(store: ObjectStore, prefix: string, writerId: string, currentEpoch: number, nowMs: number, epochs?: readonly number[]): Promise<number[]> {
  const sealed: number[] = [];
  for (const epoch of epochs ?? (await listEpochs(store, prefix, writerId))) {
    if (epoch >= currentEpoch) continue;
    const stream = { writerId, epoch };
    const before = await listSequences(store, prefix, stream);
    const sealSequence = await ensureSealed(store, prefix, stream, { writerId, nowMs });
    if (!before.has(sealSequence)) sealed.push(epoch);
  }
  return sealed;
}

/** The object's kind from its header; null when it is gone (WAL GC collected it, or a void seal was deleted). */
async function kindUnlessGone(store: ObjectStore, key: string): Promise<'data' | 'seal' | null> {
  try {
    const { body } = await store.get(key, { range: { start: 0, end: HEADER_PROBE_BYTES } });
    return decodeHeader(body).kind;
  } catch (error) {
    if (isStoreError(error, 'NotFound')) return null;
    throw error;
  }
}

/** The epochs that have at least one object for `writerId`. */
export async function listEpochs(store: ObjectStore, prefix: string, writerId: string): Promise<number[]> {
  const epochs = new Set<number>();
  let token: string | undefined;
  do {
    const page = await store.list(`${walRoot(prefix)}${writerId}/`, token === undefined ? {} : { token });
    for (const object of page.objects) {
      const parsed = parseWalObjectKey(prefix, object.key);
      if (parsed !== null && parsed.stream.writerId === writerId) epochs.add(parsed.stream.epoch);
    }
    token = page.nextToken;
  } while (token !== undefined);
  return [...epochs].sort((a, b) => a - b);
}
