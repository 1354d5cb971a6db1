import { parseWalObjectKey } from '../wal/keys.ts';
import { isStoreError } from '../store/errors.ts';
import { splitBatches } from '../format/batch-parse.ts';
import type { MemoryStore } from '../store/memory.ts';
import { decodeWalObject } from '../wal/format.ts';
import type { WalRecord } from './history.ts';
import { batchValues } from './batch-values.ts';

/** The WAL objects live under this prefix of the WAL store (src/wal/keys.ts, no store prefix in the simulation). */
const WAL_KEY_PREFIX = 'wal/';
/** A batch in a WAL frame is at most a frame: no separate bound. */
const BATCH_BYTES_MAX = 0xffff_ffff;
/** Tries of one audit read against the store's background faults. */
const AUDIT_READ_TRIES = 50;

/**
 * Every write request that reached the WAL store, by key and content: when the first request that
 * carried those exact bytes to that key came back from the store (answered, or failed: a write
 * that timed out may have landed). An object that holds a record is the record's durability, and
 * no writer can know of it before such an answer: the ack-after-durable invariant holds each
 * acknowledgement to come after one.
 */
export class WalWrites {
  readonly #firstSettledMs = new Map<string, number>();

  /** A write of `body` to `key` came back from the store at `atMs` (whatever it answered). */
  settled(key: string, body: Uint8Array, atMs: number): void {
    if (!key.startsWith(WAL_KEY_PREFIX)) return;
    const id = writeId(key, body);
    if (!this.#firstSettledMs.has(id)) this.#firstSettledMs.set(id, atMs);
  }

  firstSettledMs(key: string, body: Uint8Array): number | undefined {
    return this.#firstSettledMs.get(writeId(key, body));
  }
}

function writeId(key: string, body: Uint8Array): string {
  return `${key}\u0000${Bun.hash.xxHash64(body).toString(16)}`;
}

/**
 * Lists each record in every WAL object the store holds at the end of the run, with when a write
 * of its object first came back, relative to `startMs`. Read from the store's own map in one
 * step, not through requests: what it holds at this instant, with no simulated time passing (no
 * latency, no faults to retry, nothing collected meanwhile). A seal carries no records; an object
 * that does not decode is skipped (the followers' checks are for that).
 */
export function auditWal(store: MemoryStore, writes: WalWrites, startMs: number): WalRecord[] {
  const records: WalRecord[] = [];
  for (const key of store.peekKeys(WAL_KEY_PREFIX)) {
    if (parseWalObjectKey('', key) === null) continue; // a floor mark ([G4]), not an object of a stream
    const body = store.peek(key);
    if (body === null) continue;
    const settledMs = writes.firstSettledMs(key, body);
    if (settledMs !== undefined) records.push(...recordsOf(body, settledMs - startMs));
  }
  return records;
}

/** One audit read, tried again past the store's background faults; an object that is not there is an answer, not a fault. */
export async function retriedRead<T>(request: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await request();
    } catch (error) {
      if (attempt >= AUDIT_READ_TRIES || isStoreError(error, 'NotFound')) throw error;
    }
  }
}

export function recordsOf(body: Uint8Array, settledMs: number): WalRecord[] {
  let object: ReturnType<typeof decodeWalObject>;
  try {
    object = decodeWalObject(body);
  } catch {
    return [];
  }
  const records: WalRecord[] = [];
  for (const { entry, data } of object.frames) {
    for (const batch of splitBatches(data, BATCH_BYTES_MAX)) {
      for (const { offset, value } of batchValues(batch)) records.push({ topic: entry.topic, partition: entry.partition, offset, value, settledMs });
    }
  }
  return records;
}
