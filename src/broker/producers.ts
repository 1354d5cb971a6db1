import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../util/files.ts';

export const PRODUCER_IDS_FILE = 'producer-id-block';
/** Ids reserved per durable write: a restart skips the rest of a block, never reuses an id. */
const PRODUCER_ID_BLOCK = 1000;
const NODE_ID_BLOCK = 2 ** 32;
/**
 * Idempotent producers' ids: InitProducerId hands them out from durably reserved blocks. Their
 * sequences are the partition's business (src/log/producer-state.ts), checked in the append.
 */
export class ProducerIds {
  readonly #path: string;
  #next: number;
  #reservedUntil: number;

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
}
