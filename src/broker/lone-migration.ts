import { join } from 'node:path';
import type { ControlStore } from '../control/control-store.ts';
import type { PartitionRecord, TopicRecord } from '../cluster/control-records.ts';
import { FerryError } from '../errors.ts';
import type { TopicDescription } from '../engine/index.ts';
import { readLogStartCheckpoint } from '../log/log-start-checkpoint.ts';
import type { Logger } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Disk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import type { StreamId } from '../wal/keys.ts';
import { listEpochs } from '../wal/seal.ts';
import type { ControlOffsetStore, OffsetStore } from './groups/offset-store.ts';
import { type ControlProducerIdBlocks, fileProducerIdsNext } from './producers.ts';

/**
 * Written in the data directory once a lone broker's state is in control records: a later start
 * never migrates again (the registry of a cluster of one lists what it adopted, not what to create).
 */
export const MIGRATED_MARKER_FILE = 'control-records.migrated';
/** The leader epoch a lone broker before issue 24 wrote into its batches (the engine's own). */
const LONE_LEADER_EPOCH = 0;

export interface LoneMigration {
  readonly directory: string;
  readonly disk: Disk;
  readonly control: ControlStore;
  readonly nodeId: number;
  /** The topics the directory's registry lists (the engine opened it). */
  readonly topics: readonly TopicDescription[];
  /** This broker's WAL streams: every epoch below the one it writes now carried its partitions. */
  readonly wal: { readonly store: ObjectStore; readonly prefix: string; readonly writerId: string; readonly currentEpoch: number };
  readonly producerIds: ControlProducerIdBlocks;
  /** The directory's group offsets file, and where they go. */
  readonly groupOffsets: { readonly from: OffsetStore; readonly to: ControlOffsetStore };
  readonly log: Logger;
}

/**
 * Issue 24 (docs/design.md contract 14): a data directory a lone broker wrote before it became a
 * cluster of one holds its topics, producer-id block and group offsets only on its disk. At its
 * first start they are written as control records, once: topics with their ids (the WAL frames and
 * tier records name them), partition records naming this broker at the epoch it wrote, with every
 * earlier stream of its writer id as the chain (the first scan claims them, seals those streams and
 * rebuilds from the tier's end and the WAL, [C3]-[C5]); the producer-id record raised past every id
 * the file handed out; each group's offsets. A record that exists already is left as it is.
 * Not carried over: what the local log holds beyond the WAL (acks=0/1 records a kill -9 kept from
 * shipping), and the embedded API's own log settings of a topic.
 */
export async function migrateLoneDirectory(migration: LoneMigration): Promise<void> {
  const marker = join(migration.directory, MIGRATED_MARKER_FILE);
  if (migration.disk.existsSync(marker)) return;
  const { wal } = migration;
  const chain: StreamId[] = (await listEpochs(wal.store, wal.prefix, wal.writerId)).filter((epoch) => epoch < wal.currentEpoch).map((epoch) => ({ writerId: wal.writerId, epoch }));
  for (const topic of migration.topics) await migrateTopic(migration, topic, chain);
  await migrateProducerIds(migration);
  await migrateGroupOffsets(migration);
  writeFileAtomicSync(marker, new TextEncoder().encode('issue 24: topics, producer ids and group offsets are control records\n'), migration.disk);
}

async function migrateTopic(migration: LoneMigration, topic: TopicDescription, chain: readonly StreamId[]): Promise<void> {
  const { control } = migration;
  // DI1: an incarnation with a deletion record never lives again (every sweeper takes its objects):
  // a directory from before the migration (a restored backup) still lists a topic deleted since.
  if (await new DeletedIncarnations(control).isDeleted(topic.id)) {
    migration.log.warn({ topic: topic.name, topicId: topic.id }, `topic ${topic.name} (id ${topic.id}) of the data directory was deleted since: not moved into the control records`);
    return;
  }
  const record: TopicRecord = {
    topicId: topic.id,
    partitions: topic.partitions,
    replicationFactor: 1,
    leaderEpochBase: LONE_LEADER_EPOCH,
    ...(topic.configs === undefined ? {} : { configs: topic.configs }),
  };
  if ((await control.create<TopicRecord>(`topics/${topic.name}`, record)) === null) {
    // A record stands: it is the truth. Unless it is this very incarnation's, left by a migration
    // that stopped before its partition records (no marker yet): those are written now, or the first
    // scan would claim each partition as never led and rebuild none of the directory's records.
    const standing = (await control.read<TopicRecord>(`topics/${topic.name}`))?.value;
    if (standing !== undefined && standing.topicId !== topic.id)
      // Another incarnation holds the name (another broker that shared the store before, each a cluster
      // of one over its control records now): dropping this one would leave its records served by no one.
      throw new FerryError(
        'InvalidArgument',
        `topic ${topic.name} (id ${topic.id}) of the data directory cannot be moved into the control records: another incarnation (id ${standing.topicId}) holds the name there`,
      );
    if (standing === undefined || standing.deleting === true) return;
  }
  for (let partition = 0; partition < topic.partitions; partition++) {
    const logStartOffset = readLogStartCheckpoint(join(migration.directory, `${topic.name}-${partition}`), migration.disk);
    const claim: PartitionRecord = { topicId: topic.id, leader: migration.nodeId, leaderEpoch: LONE_LEADER_EPOCH, chain, ...(logStartOffset > 0 ? { logStartOffset } : {}) };
    await control.create<PartitionRecord>(`partitions/${topic.name}/${partition}`, claim);
  }
  migration.log.info({ topic: topic.name, topicId: topic.id, partitions: topic.partitions, streams: chain.length }, `topic ${topic.name} moved from the data directory into the control records`);
}

async function migrateProducerIds(migration: LoneMigration): Promise<void> {
  const next = fileProducerIdsNext(migration.directory, migration.nodeId, migration.disk);
  if (next !== null) await migration.producerIds.raiseTo(next);
}

async function migrateGroupOffsets(migration: LoneMigration): Promise<void> {
  const { from, to } = migration.groupOffsets;
  for (const group of await from.groups()) {
    if ((await to.list(group)).length > 0) continue;
    const offsets = await from.list(group);
    if (offsets.length === 0) continue;
    await to.commit(group, offsets, await to.claim(group, true));
    to.forget(group); // its coordinator claims it afresh when a member comes
  }
}
