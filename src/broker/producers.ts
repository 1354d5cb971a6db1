import { join } from 'node:path';
import type { ControlStore } from '../control/control-store.ts';
import { FerryError } from '../errors.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';

export const PRODUCER_IDS_FILE = 'producer-id-block';
/** Ids reserved per durable write: a restart skips the rest of a block, never reuses an id. */
const PRODUCER_ID_BLOCK = 1000;
/** Ids each node's own file hands out, from nodeId x this: a node never reaches the next node's. */
const NODE_ID_BLOCK = 2 ** 32;
/**
 * The highest node id whose producer ids are exact in a JavaScript number (2^21 x 2^32 = 2^53):
 * above it consecutive ids round to the same number and every producer got one id (their sequences
 * then collide: a batch taken for another's duplicate is acknowledged and never written).
 */
export const FILE_PRODUCER_IDS_NODE_ID_MAX = 2 ** 21 - 1;
/** The control record that holds the cluster's next unreserved producer id. */
const PRODUCER_IDS_RECORD = 'producer-ids';
/** Compare-and-swap rounds before a reservation gives up (each lost round means another broker reserved a block). */
const RESERVE_ATTEMPTS_MAX = 100;

/** Where blocks of producer ids are reserved durably: `[start, end)`, never handed out again. */
export interface ProducerIdBlocks {
  reserve(): Promise<{ readonly start: number; readonly end: number }>;
}

/**
 * A single broker's blocks, in a file of its data directory. Ids start at nodeId x 2^32, so even
 * brokers that each keep their own file never hand out the same id.
 */
export class FileProducerIdBlocks implements ProducerIdBlocks {
  readonly #path: string;
  readonly #base: number;
  readonly #disk: Disk;
  #next: number;

  constructor(directory: string, nodeId = 0, disk: Disk = systemDisk) {
    if (!Number.isSafeInteger(nodeId) || nodeId < 0 || nodeId > FILE_PRODUCER_IDS_NODE_ID_MAX) {
      throw new FerryError('InvalidArgument', `node id ${nodeId} is out of range for producer ids: at most ${FILE_PRODUCER_IDS_NODE_ID_MAX} outside cluster mode`);
    }
    this.#path = join(directory, PRODUCER_IDS_FILE);
    this.#base = nodeId * NODE_ID_BLOCK;
    this.#disk = disk;
    this.#next = disk.existsSync(this.#path) ? Number(readTextFileSync(disk, this.#path)) : 0;
  }

  async reserve(): Promise<{ start: number; end: number }> {
    const start = this.#next;
    if (start + PRODUCER_ID_BLOCK > NODE_ID_BLOCK) throw new FerryError('Storage', `producer ids of this node are used up (${NODE_ID_BLOCK} ids; the next ones are another node's)`);
    writeFileAtomicSync(this.#path, new TextEncoder().encode(String(start + PRODUCER_ID_BLOCK)), this.#disk);
    this.#next = start + PRODUCER_ID_BLOCK;
    return { start: this.#base + start, end: this.#base + start + PRODUCER_ID_BLOCK };
  }
}

/**
 * The first producer id a lone broker's file (FileProducerIdBlocks, before issue 24) never handed
 * out; null without a file. A migration raises the control record past it.
 */
export function fileProducerIdsNext(directory: string, nodeId: number, disk: Disk = systemDisk): number | null {
  const path = join(directory, PRODUCER_IDS_FILE);
  if (!disk.existsSync(path)) return null;
  const next = Number(readTextFileSync(disk, path));
  if (!Number.isSafeInteger(next) || next < 0) throw new FerryError('Storage', `${path}: malformed next producer id ${JSON.stringify(next)}`);
  return nodeId * NODE_ID_BLOCK + next;
}

/**
 * A cluster's blocks, in one control record changed by compare-and-swap (as Kafka's controller
 * hands out id blocks): a broker that comes back on an empty disk, stateless by design, never
 * hands out again an id its earlier life gave to a producer that may still be writing.
 */
export class ControlProducerIdBlocks implements ProducerIdBlocks {
  readonly #control: ControlStore;

  constructor(control: ControlStore) {
    this.#control = control;
  }

  async reserve(): Promise<{ start: number; end: number }> {
    for (let attempt = 0; attempt < RESERVE_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<{ next: number }>(PRODUCER_IDS_RECORD);
      const start = current?.value.next ?? 0;
      if (!Number.isSafeInteger(start) || start < 0 || start + PRODUCER_ID_BLOCK > Number.MAX_SAFE_INTEGER)
        throw new FerryError('Storage', `control record ${PRODUCER_IDS_RECORD}: next producer id ${String(start)} is not an exact id`);
      const next = { next: start + PRODUCER_ID_BLOCK };
      const won = current === null ? await this.#control.create(PRODUCER_IDS_RECORD, next) : await this.#control.replace(PRODUCER_IDS_RECORD, current, next);
      if (won !== null) return { start, end: start + PRODUCER_ID_BLOCK };
    }
    throw new FerryError('Storage', `could not reserve producer ids: ${RESERVE_ATTEMPTS_MAX} compare-and-swap rounds lost`);
  }

  /** Raises the next unreserved id to at least `next` (a migrated lone broker's file): ids below it are never handed out again. */
  async raiseTo(next: number): Promise<void> {
    for (let attempt = 0; attempt < RESERVE_ATTEMPTS_MAX; attempt++) {
      const current = await this.#control.read<{ next: number }>(PRODUCER_IDS_RECORD);
      if ((current?.value.next ?? 0) >= next) return;
      const won = current === null ? await this.#control.create(PRODUCER_IDS_RECORD, { next }) : await this.#control.replace(PRODUCER_IDS_RECORD, current, { next });
      if (won !== null) return;
    }
    throw new FerryError('Storage', `could not raise the next producer id to ${next}: ${RESERVE_ATTEMPTS_MAX} compare-and-swap rounds lost`);
  }
}

/**
 * Idempotent producers' ids: InitProducerId hands them out from durably reserved blocks. Their
 * sequences are the partition's business (src/log/producer-state.ts), checked in the append.
 */
export class ProducerIds {
  readonly #blocks: ProducerIdBlocks;
  #next = 0;
  #end = 0;
  /** A reservation under way: concurrent allocations wait for the same one. */
  #reserving: Promise<void> | null = null;

  constructor(blocks: ProducerIdBlocks) {
    this.#blocks = blocks;
  }

  async allocate(): Promise<number> {
    while (this.#next >= this.#end) {
      this.#reserving ??= this.#blocks
        .reserve()
        .then(({ start, end }) => {
          this.#next = start;
          this.#end = end;
        })
        .finally(() => (this.#reserving = null));
      await this.#reserving;
    }
    return this.#next++;
  }
}
