import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/files.ts';

export const PRODUCER_IDS_FILE = 'producer-id-block';
/** Ids reserved per durable write: a restart skips the rest of a block, never reuses an id. */
const PRODUCER_ID_BLOCK = 1000;
const NODE_ID_BLOCK = 2 ** 32;
/** Kafka keeps the last five batches per producer to answer retried duplicates. */
const DUPLICATE_WINDOW_BATCHES = 5;

interface SequenceState {
  epoch: number;
  /** Last sequence accepted and the offsets of the last few batches, for retried duplicates. */
  lastSequence: number;
  recent: { firstSequence: number; lastSequence: number; baseOffset: number }[];
}

export type SequenceCheck = { readonly kind: 'append' } | { readonly kind: 'duplicate'; readonly baseOffset: number } | { readonly kind: 'out-of-order'; readonly expected: number } | { readonly kind: 'fenced-epoch' };

/**
 * Idempotent producers: InitProducerId hands out ids from durably reserved blocks; Produce checks
 * each batch's sequence against the last one accepted for that producer and partition, so a
 * retried batch is not written twice and a gap is refused.
 */
export class ProducerIds {
  readonly #path: string;
  #next: number;
  #reservedUntil: number;
  readonly #sequences = new Map<string, SequenceState>();

  /** Ids start at nodeId x 2^32, so brokers of one cluster never hand out the same id. */
  readonly #base: number;

  constructor(directory: string, nodeId = 0) {
    this.#base = nodeId * NODE_ID_BLOCK;
    this.#path = join(directory, PRODUCER_IDS_FILE);
    this.#next = existsSync(this.#path) ? Number(readFileSync(this.#path, 'utf8')) : 0;
    this.#reservedUntil = this.#next;
  }

  allocate(): number {
    if (this.#next >= this.#reservedUntil) {
      this.#reservedUntil = this.#next + PRODUCER_ID_BLOCK;
      writeFileAtomicSync(this.#path, new TextEncoder().encode(String(this.#reservedUntil)));
    }
    return this.#base + this.#next++;
  }

  /** Before appending a batch of an idempotent producer: append it, answer as a duplicate, or refuse. */
  check(partitionKey: string, producerId: number, epoch: number, firstSequence: number): SequenceCheck {
    const state = this.#sequences.get(`${partitionKey}/${producerId}`);
    if (state === undefined) return { kind: 'append' }; // unknown here (new, or before a restart): accept
    if (epoch < state.epoch) return { kind: 'fenced-epoch' };
    if (epoch > state.epoch) return firstSequence === 0 ? { kind: 'append' } : { kind: 'out-of-order', expected: 0 };
    const duplicate = state.recent.find((batch) => batch.firstSequence === firstSequence);
    if (duplicate !== undefined) return { kind: 'duplicate', baseOffset: duplicate.baseOffset };
    if (firstSequence !== state.lastSequence + 1) return { kind: 'out-of-order', expected: state.lastSequence + 1 };
    return { kind: 'append' };
  }

  /** After appending: remember the batch for duplicate detection. */
  appended(partitionKey: string, producerId: number, epoch: number, firstSequence: number, recordCount: number, baseOffset: number): void {
    const key = `${partitionKey}/${producerId}`;
    const state = this.#sequences.get(key);
    const fresh = state === undefined || epoch > state.epoch;
    const next: SequenceState = fresh ? { epoch, lastSequence: -1, recent: [] } : state;
    next.lastSequence = firstSequence + recordCount - 1;
    next.recent.push({ firstSequence, lastSequence: next.lastSequence, baseOffset });
    if (next.recent.length > DUPLICATE_WINDOW_BATCHES) next.recent.shift();
    this.#sequences.set(key, next);
  }
}
