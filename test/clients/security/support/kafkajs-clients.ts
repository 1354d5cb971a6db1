// kafkajs 2.2.4 as the security suite drives it: a client per protocol and credential, produce
// with acks=all, consume back in a group, metadata, and the error a refused client reports.
import { readFileSync } from 'node:fs';
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs';
import type { TestCertificates } from '../../../support/certificates.ts';

/** Every request and connection attempt gives up after this long. */
const REQUEST_TIMEOUT_MS = 5_000;
/** How long a consumer reads before reporting what it got. */
const CONSUME_DEADLINE_MS = 15_000;
const ACKS_ALL = -1;

export interface KafkajsSecurity {
  /** Trust the test CA (TLS); `client` adds a certificate; absent: TCP. */
  readonly tls?: { readonly certificates: TestCertificates; readonly client?: { readonly keyPath: string; readonly certPath: string }; readonly caPath?: string };
  readonly sasl?: SASLOptions;
}

/**
 * A kafkajs client of `bootstrap`. `retries` 0 for a refusal (one attempt, its own error); the
 * default allows kafkajs' usual retries for a path that must work.
 */
export function kafkajsClient(bootstrap: string, security: KafkajsSecurity, options: { readonly retries?: number; readonly clientId?: string } = {}): Kafka {
  const config: KafkaConfig = {
    clientId: options.clientId ?? 'ferry-security',
    brokers: [bootstrap],
    logLevel: logLevel.NOTHING,
    connectionTimeout: REQUEST_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    retry: { retries: options.retries ?? 3, initialRetryTime: 100 },
    ...(security.tls === undefined ? {} : { ssl: tlsOptions(security.tls) }),
    ...(security.sasl === undefined ? {} : { sasl: security.sasl }),
  };
  return new Kafka(config);
}

function tlsOptions(tls: NonNullable<KafkajsSecurity['tls']>): { ca: string; key?: string; cert?: string } {
  const ca = readFileSync(tls.caPath ?? tls.certificates.caPath, 'utf8');
  if (tls.client === undefined) return { ca };
  return { ca, key: readFileSync(tls.client.keyPath, 'utf8'), cert: readFileSync(tls.client.certPath, 'utf8') };
}

/** Sends `values` with acks=all; resolves with their offsets. */
export async function kafkajsProduce(kafka: Kafka, topic: string, values: readonly string[]): Promise<string[]> {
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  try {
    const metadata = await producer.send({ topic, acks: ACKS_ALL, messages: values.map((value) => ({ value, partition: 0 })) });
    return metadata.map((record) => record.baseOffset ?? '');
  } finally {
    await producer.disconnect();
  }
}

/** Reads `topic` from the beginning in consumer group `groupId` until `count` values arrived (or the deadline). */
export async function kafkajsConsume(kafka: Kafka, topic: string, groupId: string, count: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId, sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, retry: { retries: 2 } });
  const values: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let done: () => void = () => {};
    const enough = new Promise<void>((resolve) => (done = resolve));
    const crashed = new Promise<never>((_, reject) => consumer.on(consumer.events.CRASH, (event) => reject(event.payload.error)));
    await consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value?.toString() ?? '');
        if (values.length >= count) done();
      },
    });
    const deadline = Bun.sleep(CONSUME_DEADLINE_MS);
    await Promise.race([enough, deadline, crashed]);
    return values;
  } finally {
    await consumer.disconnect();
  }
}

/** The brokers and topics of Metadata as an admin client sees them. */
export async function kafkajsMetadata(kafka: Kafka, topic?: string): Promise<{ brokers: string[]; topics: string[]; partitions: number | null }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    const topics = await admin.listTopics();
    const partitions = topic === undefined ? null : ((await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions.length ?? null);
    return { brokers: cluster.brokers.map((broker) => `${broker.host}:${broker.port}`), topics: topics.sort(), partitions };
  } finally {
    await admin.disconnect();
  }
}

/** What kafkajs threw, as `Name: message`, with the error it wraps (a retry's cause) in parentheses. */
export function kafkajsError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const inner = (error as Error & { originalError?: unknown }).originalError;
  const wrapped = inner instanceof Error && inner.name !== error.name ? ` (${inner.name}: ${inner.message})` : '';
  const type = (error as Error & { type?: string }).type;
  return `${error.name}: ${error.message}${type === undefined ? '' : ` [${type}]`}${wrapped}`;
}

/**
 * A refused client's attempt to write one message with acks=all; resolves with the error kafkajs
 * reported, or 'written' when the broker took it.
 */
export async function kafkajsProduceRefused(kafka: Kafka, topic: string, value: string): Promise<string> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  try {
    await producer.connect();
    await producer.send({ topic, acks: ACKS_ALL, messages: [{ value, partition: 0 }] });
    return 'written';
  } catch (error) {
    return kafkajsError(error);
  } finally {
    await producer.disconnect().catch(() => {});
  }
}
