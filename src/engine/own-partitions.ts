import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import { PartitionLog } from '../log/partition-log.ts';
import type { Logger } from '../observability/logger.ts';
import type { InSyncReplicas } from '../partition/isr.ts';
import type { Clock } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import { systemRandom } from '../util/random.ts';
import { regressed } from '../util/regressions.ts';
import { partitionKey } from '../wal/writer.ts';
import type { EngineOptions } from './engine-options.ts';
import { type LostTail, rebuildLostTails } from './lost-tail-rebuild.ts';
import type { NodeServices } from './node-services.ts';
import { Partition, type PartitionRole } from '../partition/partition.ts';
import { preparePartitionDirectory } from './partition-metadata.ts';
import type { PartitionTable } from './partition-table.ts';
import { logRecovery } from './recovery-log.ts';
import { earlierStreamEnds, ShippedCheckpointer } from './shipped-checkpointer.ts';
import type { TopicId } from '../format/topic-id.ts';
import type { TopicDescription } from './topic-registry.ts';
import type { TopicSettings } from './topic-settings.ts';
import type { WalOptions } from './wal-writer-lifecycle.ts';

/**
 * How long an open waits for room in the WAL's upload buffer to re-ship unshipped suffixes. Room
 * frees as uploads land, so this is how long a store outage may last before the open fails; longer
 * holds a restart hanging, shorter fails opens on a slow store.
 */
const RESHIP_ROOM_WAIT_MS = 60_000;

/** What OwnPartitions opens with: the engine's options, disk, services and table. */
export interface OwnPartitionsDeps {
  readonly options: EngineOptions;
  readonly directory: string;
  readonly clock: Clock;
  readonly disk: Disk;
  readonly logger: Logger;
  readonly table: PartitionTable;
  readonly settings: TopicSettings;
  readonly services: NodeServices;
  /** A new leader partition's in-sync set. */
  readonly inSyncReplicas: (topic: string, index: number) => InSyncReplicas;
}

/**
 * The partitions an engine opens itself (alone, not managed by a cluster): every topic of its
 * registry at open, and each topic created or grown later. Each log is recovered; with a WAL, a
 * log that ends below what the earlier streams hold is rebuilt from them (a lost tail after a
 * power loss), and what they never got is re-shipped before the engine serves. A cluster's
 * engine opens nothing this way: its partitions are adopted (Engine.adoptPartition).
 */
export class OwnPartitions {
  readonly #options: EngineOptions;
  readonly #directory: string;
  readonly #clock: Clock;
  readonly #disk: Disk;
  readonly #logger: Logger;
  readonly #table: PartitionTable;
  readonly #settings: TopicSettings;
  readonly #services: NodeServices;
  readonly #inSyncReplicas: (topic: string, index: number) => InSyncReplicas;
  /** At open: partitions whose local log ends below what the WAL holds of them, opened and waiting for #rebuildLostTails. */
  readonly #lostTails: LostTail[] = [];
  /** With a WAL: saves what the streams hold per partition. */
  #checkpointer: ShippedCheckpointer | null = null;

  constructor(deps: OwnPartitionsDeps) {
    this.#options = deps.options;
    this.#directory = deps.directory;
    this.#clock = deps.clock;
    this.#disk = deps.disk;
    this.#logger = deps.logger;
    this.#table = deps.table;
    this.#settings = deps.settings;
    this.#services = deps.services;
    this.#inSyncReplicas = deps.inSyncReplicas;
  }

  /** At open, the earlier WAL epochs sealed: opens every topic of `topics`, rebuilds lost tails, re-ships unshipped suffixes. */
  async openAll(topics: readonly TopicDescription[]): Promise<void> {
    const wal = this.#options.wal;
    const shipped = wal === undefined ? null : await this.#durableEnds(topics, await this.#shippedEnds(wal));
    for (const topic of topics) this.openTopic(topic, shipped);
    if (shipped !== null) await this.#rebuildLostTails(wal!);
    await this.#reshipUnshipped();
  }

  /** Stops the shipped checkpoints (at close, before the WAL's last flush). */
  stop(): void {
    this.#checkpointer?.stop();
  }

  /** At close, after the WAL's last flush: saves what it shipped. */
  checkpoint(): void {
    this.#checkpointer?.checkpoint();
  }

  /** At close: the logs still waiting for a rebuild (an open that failed midway) close too. */
  closeLostTails(): Promise<void>[] {
    return this.#lostTails.splice(0).map(({ log }) => log.close());
  }

  /**
   * At open: every partition's local suffix its earlier streams never got goes to the new stream
   * first. Room in the upload buffer frees only as uploads land, so during a store outage the open
   * gives up after RESHIP_ROOM_WAIT_MS with one line instead of hanging (a supervisor retries it).
   */
  async #reshipUnshipped(): Promise<void> {
    const giveUp = new AbortController();
    const timer = this.#clock.setTimer(RESHIP_ROOM_WAIT_MS, () => giveUp.abort(), true);
    try {
      for (const partition of this.#table.all()) {
        await partition.reshipUnshipped(giveUp.signal).catch((error: unknown) => {
          if (!giveUp.signal.aborted) throw error;
          throw new FerryError('Storage', `${partition.topic}-${partition.index}: its unshipped suffix could not be re-shipped: the WAL store took no upload for ${RESHIP_ROOM_WAIT_MS} ms`);
        });
      }
    } finally {
      timer.cancel();
    }
  }
  /** At open, after a power loss: see rebuildLostTails. */
  async #rebuildLostTails(options: WalOptions): Promise<void> {
    const { prefix, stream } = this.#services.wal!.config;
    const tierStartOf = (topicId: TopicId, partition: number) => this.#services.tierStartOf(topicId, partition);
    const deps = { store: options.store, prefix, stream, clock: this.#clock, random: this.#options.random ?? systemRandom, report: this.#logger, tierStartOf };
    await rebuildLostTails(this.#lostTails.splice(0), deps, ({ topic, index, log, durableEnd }) => {
      this.#table.get(topic.name)![index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    });
  }
  /** `shipped`: with a WAL, each partition's known durable end (#durableEnds; absent: nothing shipped). */
  openTopic(topic: TopicDescription, shipped: ReadonlyMap<string, number> | null = null): void {
    const partitions = this.#table.get(topic.name) ?? [];
    const config = this.#settings.logConfigOf(topic.name);
    for (let index = partitions.length; index < topic.partitions; index++) {
      const directory = join(this.#directory, `${topic.name}-${index}`);
      preparePartitionDirectory(directory, topic.id, this.#disk);
      const log = PartitionLog.open(directory, { config, clock: this.#clock, storage: this.#services.storage, disk: this.#disk });
      logRecovery(this.#logger, topic.name, index, log);
      const durableEnd = this.#services.wal === null ? log.logEndOffset : (shipped?.get(partitionKey(topic.id, index)) ?? 0);
      if (durableEnd > log.logEndOffset)
        this.#lostTails.push({ topic, index, log, durableEnd }); // its place stays empty until rebuildLostTails
      else partitions[index] = this.#leaderOrFollower(topic, index, log, durableEnd);
    }
    this.#table.set(topic.name, partitions);
  }
  /** The Partition of a log this engine opened itself (not managed): led here, or followed when the engine follows. */
  #leaderOrFollower(topic: TopicDescription, index: number, log: PartitionLog, durableEnd: number): Partition {
    const role: PartitionRole =
      this.#options.follow !== undefined
        ? { kind: 'follower' }
        : { kind: 'leader', requiredFollowers: this.#settings.requiredFollowers(topic.name, index), isr: this.#inSyncReplicas(topic.name, index) };
    return new Partition(topic.name, topic.id, index, log, this.#services.wal, role, durableEnd);
  }
  /**
   * What is known durable of each partition at open: what the earlier streams hold of it (their
   * shipped checkpoint plus the objects after it) or, when more, its tier record's tiered end. The
   * tier reaches past the streams when records acknowledged after the last checkpoint were tiered
   * and WAL GC then collected their objects [G4]: a local log that lost them in a power loss must
   * still be rebuilt (from the tier's end, rebuildLostTails), or their offsets would be given to
   * new records (review of issue 27: the embedded engine's local flush 'none' made this reachable).
   */
  async #durableEnds(topics: readonly TopicDescription[], shipped: Map<string, number>): Promise<Map<string, number>> {
    if (this.#services.tierRecords === null || regressed('embedded-tier-end-not-durable')) return shipped;
    const ends = new Map(shipped);
    for (const topic of topics) {
      for (let index = 0; index < topic.partitions; index++) {
        const key = partitionKey(topic.id, index);
        const { tieredEnd } = await this.#services.tierRecordRange(topic.id, index);
        if (tieredEnd > (ends.get(key) ?? 0)) ends.set(key, tieredEnd);
      }
    }
    return ends;
  }

  /**
   * A leader starting a new WAL epoch, its earlier ones sealed (docs/wal-protocol.md [F]): learns
   * what they hold per partition, from the shipped checkpoint plus the objects written after it,
   * and keeps checkpointing what the new stream ships.
   */
  async #shippedEnds(options: WalOptions): Promise<Map<string, number>> {
    const { prefix, stream } = this.#services.wal!.config;
    const ends = await earlierStreamEnds(options.store, prefix, stream, this.#directory, this.#clock, this.#disk, this.#options.random ?? systemRandom);
    this.#checkpointer = new ShippedCheckpointer(this.#directory, ends, () => this.#services.wal, {
      clock: this.#clock,
      storage: this.#services.storage,
      disk: this.#disk,
      metrics: this.#options.metrics,
    });
    this.#checkpointer.start();
    return ends;
  }
}
