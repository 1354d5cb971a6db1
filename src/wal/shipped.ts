import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import type { Uuid } from '../util/uuid.ts';
import { streamFloor } from './floor.ts';
import type { WalReader } from './reader.ts';
import { listEpochs } from './seal.ts';
import { partitionKey } from './writer.ts';

export const SHIPPED_CHECKPOINT_FILE = 'wal-shipped-checkpoint';
/** 2: partitions are named by topic id (version 1 named them by topic name, which a re-created topic shares). */
const SHIPPED_CHECKPOINT_VERSION = 2;

/**
 * What a leader's earlier streams hold, saved now and then: every sequence of `epoch` up to
 * `sequence` was durable and together with the earlier epochs they hold each partition up to
 * `ends`. A restart reads only the objects after it to learn the rest.
 */
export interface ShippedCheckpoint {
  readonly epoch: number;
  readonly sequence: number;
  /** Per partition of one topic incarnation: its topic id, partition, end (exclusive). */
  readonly ends: readonly (readonly [topicId: Uuid, partition: number, end: number])[];
}

/** The checkpoint, or null when there is none or it is of an older version (then every stream is read). */
export function readShippedCheckpoint(directory: string, disk: Disk = systemDisk): ShippedCheckpoint | null {
  const path = join(directory, SHIPPED_CHECKPOINT_FILE);
  if (!disk.existsSync(path)) return null;
  const parsed = JSON.parse(readTextFileSync(disk, path)) as ShippedCheckpoint & { version?: number };
  if (parsed.version !== SHIPPED_CHECKPOINT_VERSION) return null;
  if (!Number.isSafeInteger(parsed.epoch) || !Number.isSafeInteger(parsed.sequence) || !Array.isArray(parsed.ends)) {
    throw new FerryError('Storage', `${path} is not a WAL shipped checkpoint`);
  }
  return { epoch: parsed.epoch, sequence: parsed.sequence, ends: parsed.ends };
}

export function writeShippedCheckpoint(directory: string, checkpoint: ShippedCheckpoint, disk: Disk = systemDisk): void {
  const body = { version: SHIPPED_CHECKPOINT_VERSION, ...checkpoint };
  writeFileAtomicSync(join(directory, SHIPPED_CHECKPOINT_FILE), new TextEncoder().encode(JSON.stringify(body)), disk);
}

/**
 * Each partition's end (exclusive) in this writer's streams before `currentEpoch`, keyed by
 * partitionKey (topic id and partition): the checkpoint's ends, raised by every object after it
 * up to each (sealed) stream's seal. Each stream is read from its WAL floor at the lowest (one
 * LIST): an object after the checkpoint that is below the floor was collected by WAL GC, so the
 * tier covers its frames (docs/tier-protocol.md GI1); it is not the stream's end.
 */
export async function shippedEnds(reader: WalReader, writerId: string, currentEpoch: number, checkpoint: ShippedCheckpoint | null): Promise<Map<string, number>> {
  const ends = new Map<string, number>();
  for (const [topicId, partition, end] of checkpoint?.ends ?? []) ends.set(partitionKey(topicId, partition), end);
  const epochs = (await listEpochs(reader.store, reader.config.prefix, writerId)).filter((epoch) => epoch < currentEpoch && epoch >= (checkpoint?.epoch ?? 0));
  for (const epoch of epochs) {
    const floor = await streamFloor(reader.store, reader.config.prefix, { writerId, epoch });
    let sequence = Math.max(floor, checkpoint !== null && epoch === checkpoint.epoch ? checkpoint.sequence + 1 : 0);
    for (; ; sequence++) {
      const index = await reader.readIndex({ writerId, epoch }, sequence);
      if (index.kind !== 'data') break; // the seal, or (for a stream sealed later) its end
      for (const entry of index.entries) {
        const key = partitionKey(entry.topicId, entry.partition);
        ends.set(key, Math.max(ends.get(key) ?? 0, entry.lastOffset + 1));
      }
    }
  }
  return ends;
}
