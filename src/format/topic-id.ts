import type { Uuid } from '../util/uuid.ts';

/** Kafka's topic id: fixed when a topic is created, never reused (docs/design.md contract 10). */
export type TopicId = Uuid;
