/**
 * The consumer protocol's bytes inside JoinGroup and SyncGroup (opaque to the broker): a member's
 * subscription (ConsumerProtocolSubscription v0) and its assignment (ConsumerProtocolAssignment v0).
 */
import { KafkaReader } from '../../protocol/reader.ts';
import { KafkaWriter } from '../../protocol/writer.ts';

const CONSUMER_PROTOCOL_VERSION = 0;

export interface TopicPartitions {
  readonly topic: string;
  readonly partitions: readonly number[];
}

function bytesOf(writer: KafkaWriter): Uint8Array {
  return Buffer.concat(writer.chunks());
}

export function encodeSubscription(topics: readonly string[]): Uint8Array {
  const writer = new KafkaWriter().int16(CONSUMER_PROTOCOL_VERSION);
  writer.array(topics, (w, topic) => w.string(topic)).nullableBytes(null);
  return bytesOf(writer);
}

export function decodeSubscription(bytes: Uint8Array): string[] {
  const reader = new KafkaReader(bytes);
  reader.int16();
  return reader.array((r) => r.string());
}

export function encodeAssignment(assigned: readonly TopicPartitions[]): Uint8Array {
  const writer = new KafkaWriter().int16(CONSUMER_PROTOCOL_VERSION);
  writer.array(assigned, (w, entry) => w.string(entry.topic).array(entry.partitions, (pw, p) => pw.int32(p))).nullableBytes(null);
  return bytesOf(writer);
}

/** An empty assignment (no bytes) is what a member gets when the leader gave it nothing. */
export function decodeAssignment(bytes: Uint8Array): TopicPartitions[] {
  if (bytes.length === 0) return [];
  const reader = new KafkaReader(bytes);
  reader.int16();
  return reader.array((r) => ({ topic: r.string(), partitions: r.array((pr) => pr.int32(), 4) }));
}

/**
 * The leader's assignment: every partition of the subscribed topics, in (topic, partition) order,
 * dealt round-robin to the members in member-id order.
 */
export function assignRoundRobin(memberIds: readonly string[], partitionCounts: ReadonlyMap<string, number>): Map<string, TopicPartitions[]> {
  const members = [...memberIds].sort();
  const byMember = new Map(members.map((id) => [id, new Map<string, number[]>()]));
  const topics = [...partitionCounts.keys()].sort();
  let turn = 0;
  for (const topic of topics) {
    for (let partition = 0; partition < partitionCounts.get(topic)!; partition++) {
      const owned = byMember.get(members[turn++ % members.length]!)!;
      owned.set(topic, [...(owned.get(topic) ?? []), partition]);
    }
  }
  return new Map([...byMember].map(([id, owned]) => [id, [...owned].map(([topic, partitions]) => ({ topic, partitions }))]));
}
