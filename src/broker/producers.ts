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

/** An accepted batch's place in the producer's sequence, held while the append runs. */
export interface SequenceReservation {
  /** The append succeeded at `baseOffset`: retries of this batch are answered with it. */
  settle(baseOffset: number): void;
  /** The append failed: the sequence is free again. */
  undo(): void;
}

export type SequenceCheck =
  | { readonly kind: 'append'; readonly reservation: SequenceReservation }
  | { readonly kind: 'duplicate'; readonly baseOffset: number }
  /** A retry of a batch whose append has not finished yet: the client should retry again. */
  | { readonly kind: 'in-flight' }
  | { readonly kind: 'out-of-order'; readonly expected: number }
  | { readonly kind: 'fenced-epoch' };

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

  /**
   * Before appending a batch of an idempotent producer: accept it (its sequences are taken at
   * once, so a pipelined next batch is checked against it), answer it as a duplicate, or refuse.
   */
  check(partitionKey: string, producerId: number, epoch: number, firstSequence: number, recordCount: number): SequenceCheck {
    const key = `${partitionKey}/${producerId}`;
    const state = this.#sequences.get(key);
    const accept = (): SequenceCheck => ({ kind: 'append', reservation: this.#reserve(key, epoch, firstSequence, recordCount) });
    if (state === undefined) return accept(); // unknown here (new, or before a restart): accept
    if (epoch < state.epoch) return { kind: 'fenced-epoch' };
    if (epoch > state.epoch) return firstSequence === 0 ? accept() : { kind: 'out-of-order', expected: 0 };
    const duplicate = state.recent.find((batch) => batch.firstSequence === firstSequence);
    if (duplicate !== undefined) return duplicate.baseOffset < 0 ? { kind: 'in-flight' } : { kind: 'duplicate', baseOffset: duplicate.baseOffset };
    if (firstSequence !== state.lastSequence + 1) return { kind: 'out-of-order', expected: state.lastSequence + 1 };
    return accept();
  }

  #reserve(key: string, epoch: number, firstSequence: number, recordCount: number): SequenceReservation {
    const previous = this.#sequences.get(key);
    const saved = previous === undefined ? undefined : { epoch: previous.epoch, lastSequence: previous.lastSequence, recent: [...previous.recent] };
    const batch = { firstSequence, lastSequence: firstSequence + recordCount - 1, baseOffset: -1 };
    this.#remember(key, epoch, batch);
    return {
      settle: (baseOffset) => void (batch.baseOffset = baseOffset),
      undo: () => void (saved === undefined ? this.#sequences.delete(key) : this.#sequences.set(key, saved)),
    };
  }

  /** A batch found in the log (a partition rebuilt from the WAL): remember it as if appended here. */
  appended(partitionKey: string, producerId: number, epoch: number, firstSequence: number, recordCount: number, baseOffset: number): void {
    this.#remember(`${partitionKey}/${producerId}`, epoch, { firstSequence, lastSequence: firstSequence + recordCount - 1, baseOffset });
  }

  #remember(key: string, epoch: number, batch: { firstSequence: number; lastSequence: number; baseOffset: number }): void {
    const state = this.#sequences.get(key);
    const next: SequenceState = state === undefined || epoch > state.epoch ? { epoch, lastSequence: -1, recent: [] } : state;
    next.lastSequence = batch.lastSequence;
    next.recent.push(batch);
    if (next.recent.length > DUPLICATE_WINDOW_BATCHES) next.recent.shift();
    this.#sequences.set(key, next);
  }
}
