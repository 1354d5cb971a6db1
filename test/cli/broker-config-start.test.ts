// `ferry broker --config server.properties` end to end: a Kafka 4.1-style KRaft combined-mode
// file (node.id, listeners with a controller listener, log.dirs, process.roles, ...) starts the
// broker with one warning line, kafkajs and kcat produce and consume, and the Kafka settings take
// effect: num.partitions (an auto-created topic's partition count), log.segment.bytes (the log
// rolled) and log.retention.bytes with log.retention.check.interval.ms (its start moved up).
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Subprocess } from 'bun';
import { Kafka, logLevel } from 'kafkajs';
import { freeLoopbackPort } from '../../bench/lib/child-processes.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);

const CLI = join(import.meta.dir, '..', '..', 'src', 'cli.ts');
const PARTITIONS = 3;
/** Kafka 4's smallest log.segment.bytes (KIP-1030). */
const SEGMENT_BYTES = 1024 * 1024;
const RECORD_BYTES = 100 * 1024;
/** Records per produce call: one batch under message.max.bytes (1 MiB), so a segment holds one. */
const RECORDS_PER_BATCH = 8;
const BATCHES = 4;
const POLL_MS = 50;
const POLLS_MAX = 1200;

const children: Subprocess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
});

function serverProperties(port: number, controllerPort: number, data: string): string {
  return `# A Kafka 4.1 server.properties, KRaft combined mode, pointed at a test port and directory
process.roles=broker,controller
node.id=3
controller.quorum.bootstrap.servers=127.0.0.1:${controllerPort}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}
inter.broker.listener.name=PLAINTEXT
advertised.listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL
num.network.threads=3
num.io.threads=8
socket.send.buffer.bytes=102400
socket.receive.buffer.bytes=102400
socket.request.max.bytes=104857600
log.dirs=${data}
num.partitions=${PARTITIONS}
num.recovery.threads.per.data.dir=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
log.retention.hours=168
log.retention.bytes=${SEGMENT_BYTES}
log.segment.bytes=${SEGMENT_BYTES}
log.retention.check.interval.ms=200
# Ferry's own: local segments only (retention deletes them here), no metrics port
remote.log.storage.system.enable=false
ferry.metrics=off
`;
}

/** Starts the broker; resolves with its stderr lines so far once it says it listens. */
async function startBroker(config: string, port: number): Promise<{ child: Subprocess<'ignore', 'pipe', 'pipe'>; stderr: string[] }> {
  const child = Bun.spawn([process.execPath, CLI, 'broker', '--config', config], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  children.push(child);
  const stderr: string[] = [];
  void (async () => {
    for await (const chunk of child.stderr)
      stderr.push(
        ...new TextDecoder()
          .decode(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
  })();
  let stdout = '';
  for await (const chunk of child.stdout) {
    stdout += new TextDecoder().decode(chunk);
    if (stdout.includes(`listening on 127.0.0.1:${port}`)) return { child, stderr };
  }
  throw new Error(`the broker exited before listening:\n${stdout}\n${stderr.join('\n')}`);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let poll = 0; poll < POLLS_MAX; poll++) {
    const value = await read();
    if (done(value)) return value;
    await Bun.sleep(POLL_MS);
  }
  throw new Error(`timed out waiting until ${what}`);
}

test('a Kafka 4.1-style server.properties starts the broker, and its settings take effect', async () => {
  const data = join(tempDir(), 'kraft-combined-logs');
  const port = freeLoopbackPort();
  const config = join(tempDir(), 'server.properties');
  writeFileSync(config, serverProperties(port, freeLoopbackPort(), data));
  const { child, stderr } = await startBroker(config, port);

  // inter.broker.listener.name is read now (the listener brokers report progress through: docs/security.md).
  expect(stderr).toContain(
    'ferry: ignoring Kafka settings Ferry has no use for: process.roles, controller.quorum.bootstrap.servers, ' +
      'num.network.threads, num.io.threads, socket.send.buffer.bytes, socket.receive.buffer.bytes, socket.request.max.bytes, num.recovery.threads.per.data.dir, ' +
      'offsets.topic.replication.factor, transaction.state.log.replication.factor, transaction.state.log.min.isr',
  );

  const kafka = new Kafka({ clientId: 'ferry-config-test', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 5 } });
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  const admin = kafka.admin();
  await producer.connect();
  await admin.connect();
  try {
    // num.partitions: the topic the first produce creates has that many partitions.
    await producer.send({ topic: 'auto-created', messages: [{ partition: 1, key: 'k', value: 'hello from kafkajs' }] });
    const metadata = await admin.fetchTopicMetadata({ topics: ['auto-created'] });
    expect(metadata.topics[0]!.partitions).toHaveLength(PARTITIONS);

    // kcat reads back what kafkajs wrote.
    const kcat = Bun.spawnSync(['kcat', '-C', '-b', `127.0.0.1:${port}`, '-t', 'auto-created', '-p', '1', '-o', 'beginning', '-c', '1', '-e', '-q', '-f', '%k=%s\\n']);
    expect(kcat.stdout.toString()).toBe('k=hello from kafkajs\n');

    // log.segment.bytes: 1 MiB segments roll under batches of 800 KiB (the default 1 GiB would not).
    const value = Buffer.alloc(RECORD_BYTES, 'x');
    for (let batch = 0; batch < BATCHES; batch++) {
      await producer.send({ topic: 'auto-created', acks: -1, messages: Array.from({ length: RECORDS_PER_BATCH }, () => ({ partition: 0, value })) });
    }
    const segments = readdirSync(join(data, 'auto-created-0')).filter((name) => name.endsWith('.log'));
    expect(segments.some((name) => Number(name.replace('.log', '')) > 0)).toBe(true);

    // log.retention.bytes, run every log.retention.check.interval.ms: the oldest segments go.
    const offsets = await until(
      () => admin.fetchTopicOffsets('auto-created'),
      (all) => Number(all.find((entry) => entry.partition === 0)!.low) > 0,
      'retention deletes the oldest segments',
    );
    const partition0 = offsets.find((entry) => entry.partition === 0)!;
    expect(Number(partition0.high)).toBe(RECORDS_PER_BATCH * BATCHES);
    expect(Number(partition0.low) % RECORDS_PER_BATCH).toBe(0); // whole segments (one batch each) were deleted
  } finally {
    await producer.disconnect();
    await admin.disconnect();
  }
  child.kill('SIGTERM');
  expect(await child.exited).toBe(0);
});

test('a typo in server.properties stops the start with exit code 2 and one line naming the key', async () => {
  const config = join(tempDir(), 'server.properties');
  writeFileSync(config, `node.id=1\nlisteners=PLAINTEXT://127.0.0.1:${freeLoopbackPort()}\nnum.partitons=3\n`);
  const child = Bun.spawn([process.execPath, CLI, 'broker', '--config', config], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  children.push(child);
  expect(await child.exited).toBe(2);
  expect(await new Response(child.stderr).text()).toBe(`ferry broker: config ${config}: num.partitons is not a Kafka or Ferry setting (did you mean num.partitions?)\n`);
});
