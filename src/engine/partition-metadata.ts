import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { makeDirectoriesSync, writeFileAtomicSync } from '../util/files.ts';
import { isUuid } from '../util/uuid.ts';
import type { TopicId } from '../format/topic-id.ts';

/** Kafka's file (KIP-516) naming the topic id a partition directory belongs to. */
export const PARTITION_METADATA_FILE = 'partition.metadata';
const PARTITION_METADATA_VERSION = 0;

/** The topic id a partition directory names, or null when it names none. */
export function readPartitionTopicId(directory: string, disk: Disk = systemDisk): TopicId | null {
  const path = join(directory, PARTITION_METADATA_FILE);
  if (!disk.existsSync(path)) return null;
  const fields = new Map(
    readTextFileSync(disk, path)
      .split('\n')
      .filter((line) => line.includes(':'))
      .map((line) => {
        const at = line.indexOf(':');
        return [line.slice(0, at).trim(), line.slice(at + 1).trim()] as const;
      }),
  );
  const topicId = fields.get('topic_id');
  if (fields.get('version') !== String(PARTITION_METADATA_VERSION) || !isUuid(topicId))
    throw new FerryError('Storage', `${path} is not a version ${PARTITION_METADATA_VERSION} partition metadata file`);
  return topicId;
}

/**
 * Makes `directory` the home of a partition of topic incarnation `topicId`, before its log is
 * opened. A directory naming another topic id holds a deleted incarnation (a delete that crashed
 * before removing it): it is removed, never reused. A directory naming none predates topic ids
 * (or was just made) and is claimed for this one.
 */
export function preparePartitionDirectory(directory: string, topicId: TopicId, disk: Disk = systemDisk): void {
  const found = disk.existsSync(directory) ? readPartitionTopicId(directory, disk) : null;
  if (found === topicId) return;
  if (found !== null) disk.rmSync(directory, { recursive: true, force: true });
  makeDirectoriesSync(directory, disk); // its name durable in the engine's directory before any record is acknowledged in it
  writeFileAtomicSync(join(directory, PARTITION_METADATA_FILE), new TextEncoder().encode(`version: ${PARTITION_METADATA_VERSION}\ntopic_id: ${topicId}\n`), disk);
}
