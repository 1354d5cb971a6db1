import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import type { LogConfig } from '../log/config.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import type { Random } from '../util/random.ts';
import type { TopicId } from '../format/topic-id.ts';
import { isUuid, randomUuid } from '../util/uuid.ts';

export const TOPICS_FILE = 'topics.json';
/** 2: topics carry their id, and the ids of deleted topics are remembered (1 had neither). */
const TOPICS_FORMAT_VERSION = 2;
/** Kafka brokers cap partitions per topic far higher; this bounds one engine's open files. */
export const PARTITIONS_PER_TOPIC_MAX = 10_000;
/**
 * Ids of deleted topics kept, so that a frame of a deleted incarnation met again (a follower
 * re-reading after a restart) is known for what it is. Each costs ~25 bytes of topics.json; past
 * this many the oldest are forgotten, by which time no follower is still reading their frames.
 */
export const RETIRED_TOPIC_IDS_MAX = 10_000;

/** A topic as an engine holds it: its name, incarnation id, partition count and settings. */
export interface TopicDescription {
  /** The topic's name (Kafka's rules: at most 249 of [a-zA-Z0-9._-]). */
  readonly name: string;
  /** Tells this incarnation of the name from any other, deleted or yet to come. */
  readonly id: TopicId;
  /** How many partitions it has, numbered from 0. */
  readonly partitions: number;
  /** Log settings that differ from the engine's defaults (the embedded API's own overrides). */
  readonly config: Partial<LogConfig>;
  /** Kafka topic configs set on the topic (src/log/topic-config.ts), over `config`; absent in files written before them: none. */
  readonly configs?: TopicConfigs;
}

interface TopicsFile {
  readonly version: number;
  readonly topics: (Omit<TopicDescription, 'id'> & { id?: TopicId })[];
  readonly retiredIds?: TopicId[];
}

/**
 * The engine's topics, persisted durably in `<dir>/topics.json` before any partition exists.
 * Each topic gets its id here when it is created (or takes the one a cluster assigned); a deleted
 * topic's id is retired and never served again.
 */
export class TopicRegistry {
  readonly #path: string;
  readonly #disk: Disk;
  readonly #random: Random;
  readonly #topics: Map<string, TopicDescription>;
  #retired: TopicId[];
  #lastWriteBytes = 0;

  private constructor(path: string, disk: Disk, random: Random, topics: Map<string, TopicDescription>, retired: TopicId[]) {
    this.#path = path;
    this.#disk = disk;
    this.#random = random;
    this.#topics = topics;
    this.#retired = retired;
  }

  /** `random` draws the ids of new topics: it must not repeat across restarts (not a fixed seed in production). */
  static open(directory: string, random: Random, disk: Disk = systemDisk): TopicRegistry {
    const path = join(directory, TOPICS_FILE);
    if (!disk.existsSync(path)) return new TopicRegistry(path, disk, random, new Map(), []);
    const parsed = JSON.parse(readTextFileSync(disk, path)) as TopicsFile;
    if (parsed.version !== 1 && parsed.version !== TOPICS_FORMAT_VERSION) throw new FerryError('Storage', `${path}: unknown format version ${parsed.version}`);
    const retired = parsed.retiredIds ?? [];
    const registry = new TopicRegistry(path, disk, random, new Map(), retired);
    const topics = new Map<string, TopicDescription>();
    for (const topic of parsed.topics) {
      if (topic.id !== undefined && !isUuid(topic.id)) throw new FerryError('Storage', `${path}: topic ${topic.name} has a malformed id ${JSON.stringify(topic.id)}`);
      topics.set(topic.name, { ...topic, id: topic.id ?? registry.#freshId() }); // version 1 had no ids: each gets one now
    }
    if (parsed.version === TOPICS_FORMAT_VERSION) registry.#replace(topics);
    else registry.#save(topics);
    return registry;
  }

  get(name: string): TopicDescription | undefined {
    return this.#topics.get(name);
  }

  list(): TopicDescription[] {
    return [...this.#topics.values()];
  }

  /** Whether `id` is that of a topic deleted here: nothing of it may be served again. */
  isRetired(id: TopicId): boolean {
    return this.#retired.includes(id);
  }

  /**
   * Adds a topic with a fresh id, or with `id` when a cluster or a leader's WAL assigned one.
   * TopicAlreadyExists if the name is taken; InvalidArgument for a deleted topic's id.
   */
  add(topic: Omit<TopicDescription, 'id'>, id?: TopicId): TopicDescription {
    if (this.#topics.has(topic.name)) throw new FerryError('TopicAlreadyExists', `topic ${topic.name} already exists`);
    if (id !== undefined && (!isUuid(id) || this.isRetired(id) || this.list().some((t) => t.id === id))) {
      throw new FerryError('InvalidArgument', `topic id ${id} for ${topic.name} is malformed, deleted, or another topic's`);
    }
    const added = { ...topic, id: id ?? this.#freshId() };
    this.#save(new Map([...this.#topics, [topic.name, added]]));
    return added;
  }

  /** Raises a topic's partition count (a follower learning of partitions from the WAL). */
  grow(name: string, partitions: number): TopicDescription {
    const topic = this.#topics.get(name);
    if (topic === undefined) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
    if (partitions <= topic.partitions) return topic;
    const grown = { ...topic, partitions };
    this.#save(new Map([...this.#topics, [name, grown]]));
    return grown;
  }

  /** Replaces a topic's Kafka configs (an alteration, or a cluster's topic record changed); durable before it returns. */
  reconfigure(name: string, configs: TopicConfigs): TopicDescription {
    const topic = this.#topics.get(name);
    if (topic === undefined) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
    const reconfigured = { ...topic, configs };
    this.#save(new Map([...this.#topics, [name, reconfigured]]));
    return reconfigured;
  }

  /** Removes a topic and retires its id. */
  remove(name: string): void {
    const topic = this.#topics.get(name);
    if (topic === undefined) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
    const rest = new Map(this.#topics);
    rest.delete(name);
    this.#save(rest, [...this.#retired, topic.id].slice(-RETIRED_TOPIC_IDS_MAX));
  }

  /** An id no topic here has or had (drawn again on the rare collision, so even a seeded source is safe locally). */
  #freshId(): TopicId {
    for (;;) {
      const id = randomUuid(this.#random);
      if (!this.isRetired(id) && !this.list().some((t) => t.id === id)) return id;
    }
  }

  /**
   * The size of the registry's last write, landed or not: a failed one says how much room a disk
   * probe must find before the registry can be written again (it is rewritten whole).
   */
  get lastWriteBytes(): number {
    return this.#lastWriteBytes;
  }

  /** Writes the registry, and only once it is written takes it as the registry in memory (a failed write changes nothing). */
  #save(topics: Map<string, TopicDescription>, retired: TopicId[] = this.#retired): void {
    const file: TopicsFile = { version: TOPICS_FORMAT_VERSION, topics: [...topics.values()], retiredIds: retired };
    const bytes = new TextEncoder().encode(JSON.stringify(file, null, 2));
    this.#lastWriteBytes = bytes.length;
    writeFileAtomicSync(this.#path, bytes, this.#disk);
    this.#retired = retired;
    this.#replace(topics);
  }

  #replace(topics: Map<string, TopicDescription>): void {
    this.#topics.clear();
    for (const [name, topic] of topics) this.#topics.set(name, topic);
  }
}
