import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FerryError } from '../errors.ts';
import type { LogConfig } from '../log/config.ts';
import { writeFileAtomicSync } from '../util/files.ts';

export const TOPICS_FILE = 'topics.json';
const TOPICS_FORMAT_VERSION = 1;
/** Kafka brokers cap partitions per topic far higher; this bounds one engine's open files. */
export const PARTITIONS_PER_TOPIC_MAX = 10_000;

export interface TopicDescription {
  readonly name: string;
  readonly partitions: number;
  /** Log settings that differ from the engine's defaults. */
  readonly config: Partial<LogConfig>;
}

/** The engine's topics, persisted durably in `<dir>/topics.json` before any partition exists. */
export class TopicRegistry {
  readonly #path: string;
  readonly #topics: Map<string, TopicDescription>;

  private constructor(path: string, topics: Map<string, TopicDescription>) {
    this.#path = path;
    this.#topics = topics;
  }

  static open(directory: string): TopicRegistry {
    const path = join(directory, TOPICS_FILE);
    const topics = new Map<string, TopicDescription>();
    if (existsSync(path)) {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as { version: number; topics: TopicDescription[] };
      if (parsed.version !== TOPICS_FORMAT_VERSION) throw new FerryError('Storage', `${path}: unknown format version ${parsed.version}`);
      for (const topic of parsed.topics) topics.set(topic.name, topic);
    }
    return new TopicRegistry(path, topics);
  }

  get(name: string): TopicDescription | undefined {
    return this.#topics.get(name);
  }

  list(): TopicDescription[] {
    return [...this.#topics.values()];
  }

  add(topic: TopicDescription): void {
    if (this.#topics.has(topic.name)) throw new FerryError('TopicAlreadyExists', `topic ${topic.name} already exists`);
    this.#save(new Map([...this.#topics, [topic.name, topic]]));
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

  remove(name: string): void {
    if (!this.#topics.has(name)) throw new FerryError('UnknownTopicOrPartition', `unknown topic ${name}`);
    const rest = new Map(this.#topics);
    rest.delete(name);
    this.#save(rest);
  }

  #save(topics: Map<string, TopicDescription>): void {
    const body = JSON.stringify({ version: TOPICS_FORMAT_VERSION, topics: [...topics.values()] }, null, 2);
    writeFileAtomicSync(this.#path, new TextEncoder().encode(body));
    this.#topics.clear();
    for (const [name, topic] of topics) this.#topics.set(name, topic);
  }
}
