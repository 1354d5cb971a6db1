// `ferry broker`'s configuration: Kafka's names and ferry. names in a properties or JSON file,
// mapped to Ferry's settings, with precedence defaults < file < FERRY_* < flags, and one-line
// errors naming the key for typos and bad values.
import { describe, expect, test } from 'bun:test';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { CliError } from '../../src/cli/args.ts';
import { type BrokerConfig, resolveBrokerConfig, type ResolvedBrokerConfig } from '../../src/cli/broker-config.ts';
import { tempDir } from '../support/temp-dir.ts';

const KAFKA_41_DEFAULT = join(import.meta.dir, 'fixtures', 'kafka-4.1-server.properties');
const HOUR_MS = 3_600_000;

function configFile(name: string, text: string): string {
  const path = join(tempDir(), name);
  writeFileSync(path, text);
  return path;
}

function resolve(text: string, options: { name?: string; flags?: Record<string, string | boolean>; env?: Record<string, string> } = {}): ResolvedBrokerConfig {
  const path = configFile(options.name ?? 'server.properties', text);
  return resolveBrokerConfig({ flags: { config: path, ...options.flags }, env: options.env ?? {} });
}

function config(text: string, options: { name?: string; flags?: Record<string, string | boolean>; env?: Record<string, string> } = {}): BrokerConfig {
  return resolve(text, options).config;
}

/** The one-line error a config stops the start with (exit code 2). */
function failure(text: string, name = 'server.properties'): string {
  try {
    resolve(text, { name });
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).not.toContain('\n');
    return (error as CliError).message.replace(/config \S+server\.properties|config \S+\.json/, 'config FILE');
  }
  throw new Error('the config was accepted');
}

describe("Kafka 4.1's default server.properties", () => {
  test('starts: listens on every interface, advertises localhost, one warning line for what Ferry ignores', () => {
    const { config: broker, warnings } = resolveBrokerConfig({ flags: { config: KAFKA_41_DEFAULT }, env: {} });
    expect(broker.listen).toEqual({ host: '0.0.0.0', port: 9092 });
    expect(broker.advertised).toEqual({ host: 'localhost', port: 9092 });
    expect(broker.nodeId).toBe(1);
    expect(broker.data).toBe('/tmp/kraft-combined-logs');
    expect(broker.partitions).toBe(1);
    expect(broker.log).toEqual({ flush: { kind: 'none' }, segmentBytes: 1073741824, retentionMs: 168 * HOUR_MS });
    expect(broker.retentionCheckIntervalMs).toBe(300000);
    // inter.broker.listener.name is read now (issue 13): the listener brokers reach each other at
    expect(broker.security.interBroker).toEqual({ listener: 'PLAINTEXT', tls: null, sasl: null });
    expect(warnings).toEqual([
      'ferry: ignoring Kafka settings Ferry has no use for: process.roles, controller.quorum.bootstrap.servers, ' +
        'num.network.threads, num.io.threads, socket.send.buffer.bytes, socket.receive.buffer.bytes, socket.request.max.bytes, ' +
        'num.recovery.threads.per.data.dir, offsets.topic.replication.factor, share.coordinator.state.topic.replication.factor, ' +
        'share.coordinator.state.topic.min.isr, transaction.state.log.replication.factor, transaction.state.log.min.isr',
    ]);
  });
});

describe('Kafka names map to Ferry settings', () => {
  test('broker identity, topics and connections', () => {
    const broker = config(
      [
        'listeners=PLAINTEXT://127.0.0.1:19092',
        'advertised.listeners=PLAINTEXT://broker.example:9092',
        'node.id=7',
        'broker.rack=use1-az1',
        'log.dirs=/var/ferry',
        'num.partitions=6',
        'default.replication.factor=3',
        'min.insync.replicas=2',
        'auto.create.topics.enable=false',
        'max.connections=50',
        'connections.max.idle.ms=1234',
        'queued.max.request.bytes=209715200',
        'offsets.retention.minutes=60',
        'replica.lag.time.max.ms=5000',
        'remote.log.storage.system.enable=false',
      ].join('\n'),
    );
    expect(broker).toMatchObject({
      listen: { host: '127.0.0.1', port: 19092 },
      advertised: { host: 'broker.example', port: 9092 },
      nodeId: 7,
      rack: 'use1-az1',
      data: '/var/ferry',
      partitions: 6,
      replicationFactor: 3,
      minInsyncReplicas: 2,
      autoCreate: false,
      maxConnections: 50,
      connectionsMaxIdleMs: 1234,
      queuedMaxRequestBytes: 209715200,
      offsetsRetentionMs: 60 * 60_000,
      replicaLagTimeMaxMs: 5000,
      tier: false,
      writerId: 'broker-7',
    });
  });

  test("topic-level defaults go into the engine's log config", () => {
    const broker = config(
      [
        'log.segment.bytes=2097152',
        'log.roll.ms=60000',
        'log.retention.bytes=10485760',
        'log.retention.ms=120000',
        'log.local.retention.ms=60000',
        'log.local.retention.bytes=4194304',
        'log.index.interval.bytes=1024',
        'message.max.bytes=500000',
      ].join('\n'),
    );
    expect(broker.log).toEqual({
      flush: { kind: 'none' },
      segmentBytes: 2097152,
      segmentMs: 60000,
      retentionBytes: 10485760,
      retentionMs: 120000,
      localRetentionMs: 60000,
      localRetentionBytes: 4194304,
      indexIntervalBytes: 1024,
      maxBatchBytes: 500000,
    });
  });

  test('without a cluster store, --lease-ms and --scan-interval-ms are the lease and scan of the cluster of one (issue 24)', () => {
    expect(resolveBrokerConfig({ flags: { 'lease-ms': '3000', 'scan-interval-ms': '250' }, env: {} }).config.lone).toEqual({ leaseMs: 3000, scanIntervalMs: 250 });
    expect(resolveBrokerConfig({ flags: {}, env: {} }).config.lone).toEqual({ leaseMs: 10_000, scanIntervalMs: 1000 });
    expect(resolveBrokerConfig({ flags: { 'cluster-store': 's3://control', 'lease-ms': '3000' }, env: {} }).config.lone).toBeNull();
  });

  test('without a config file the log config is only the flush policy (Kafka defaults apply)', () => {
    expect(resolveBrokerConfig({ flags: {}, env: {} }).config.log).toEqual({ flush: { kind: 'none' } });
    // Kafka's enum configs take any case; the broker's timestamp type is the topics' default (a topic's own config wins).
    expect(config('log.message.timestamp.type=logappendtime').log.messageTimestampType).toBe('LogAppendTime');
  });

  test("retention: Kafka's precedence is ms over minutes over hours; a negative value keeps everything", () => {
    expect(config('log.retention.hours=2').log.retentionMs).toBe(2 * HOUR_MS);
    expect(config('log.retention.hours=2\nlog.retention.minutes=30').log.retentionMs).toBe(30 * 60_000);
    expect(config('log.retention.hours=2\nlog.retention.minutes=30\nlog.retention.ms=999').log.retentionMs).toBe(999);
    expect(config('log.retention.ms=999\nlog.retention.hours=2').log.retentionMs).toBe(999);
    expect(config('log.retention.hours=-1').log.retentionMs).toBe(-1);
    expect(config('log.retention.ms=-5').log.retentionMs).toBe(-1);
    expect(config('log.retention.bytes=-3').log.retentionBytes).toBe(-1);
  });

  test('roll: log.roll.ms over log.roll.hours', () => {
    expect(config('log.roll.hours=3').log.segmentMs).toBe(3 * HOUR_MS);
    expect(config('log.roll.hours=3\nlog.roll.ms=5000').log.segmentMs).toBe(5000);
  });

  test('log.dirs over log.dir; broker.id as node.id, equal to it if both are set', () => {
    expect(config('log.dir=/a\nlog.dirs=/b').data).toBe('/b');
    expect(config('log.dir=/a').data).toBe('/a');
    expect(config('broker.id=4').nodeId).toBe(4);
    expect(config('broker.id=4\nnode.id=4').nodeId).toBe(4);
    expect(failure('broker.id=4\nnode.id=5')).toBe("config FILE: broker.id and node.id set the same thing to different values ('4', '5')");
  });

  test('ferry. names set Ferry’s own settings', () => {
    const broker = config(
      [
        'ferry.wal.store=s3://wal/prefix',
        'ferry.tier.store=s3://tier',
        'ferry.writer.id=w-1',
        'ferry.upload.bytes=4096',
        'ferry.upload.interval.ms=7',
        'ferry.cluster.store=s3://control',
        'ferry.lease.ms=3000',
        'ferry.scan.interval.ms=200',
        'ferry.peer.port=off',
        'ferry.metrics=off',
        'ferry.unsafe.store=true',
      ].join('\n'),
    );
    expect(broker).toMatchObject({
      walStore: 's3://wal/prefix',
      tierStore: 's3://tier',
      writerId: 'w-1',
      uploadBytes: 4096,
      uploadIntervalMs: 7,
      cluster: { store: 's3://control', leaseMs: 3000, scanIntervalMs: 200, peerPort: null },
      metrics: null,
      unsafeStore: true,
    });
  });

  test('upload when idle ([W8]) is on by default; off by ferry.upload.when.idle=false, FERRY_UPLOAD_WHEN_IDLE=false or --no-upload-when-idle; a bad value names its source', () => {
    expect(resolveBrokerConfig({ flags: {}, env: {} }).config.uploadWhenIdle).toBe(true);
    expect(config('ferry.upload.when.idle=false').uploadWhenIdle).toBe(false);
    expect(resolveBrokerConfig({ flags: {}, env: { FERRY_UPLOAD_WHEN_IDLE: 'false' } }).config.uploadWhenIdle).toBe(false);
    expect(resolveBrokerConfig({ flags: { 'no-upload-when-idle': true }, env: { FERRY_UPLOAD_WHEN_IDLE: 'true' } }).config.uploadWhenIdle).toBe(false);
    expect(() => resolveBrokerConfig({ flags: {}, env: { FERRY_UPLOAD_WHEN_IDLE: 'sometimes' } })).toThrow("FERRY_UPLOAD_WHEN_IDLE must be true or false, got 'sometimes'");
  });

  test("queued.max.request.bytes -1 (Kafka's no limit) keeps Ferry's bound", () => {
    expect(config('queued.max.request.bytes=-1').queuedMaxRequestBytes).toBe(resolveBrokerConfig({ flags: {}, env: {} }).config.queuedMaxRequestBytes);
  });

  test('values are trimmed, as Kafka trims them', () => {
    expect(config('num.partitions = 4   \nbroker.rack=  az1 ').partitions).toBe(4);
    expect(config('broker.rack=  az1 ').rack).toBe('az1');
  });

  test('log.message.timestamp.type CreateTime and log.cleanup.policy delete are accepted, and nothing is warned about them', () => {
    const { warnings } = resolve('log.message.timestamp.type=CreateTime\nlog.cleanup.policy=delete');
    expect(warnings).toEqual([]);
  });
});

describe('listeners', () => {
  test('controller listeners are skipped; the first PLAINTEXT broker listener is used', () => {
    const broker = config('listeners=CONTROLLER://:9093,PLAINTEXT://127.0.0.1:9092\ncontroller.listener.names=CONTROLLER');
    expect(broker.listen).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(broker.advertised).toBeNull();
  });

  test('a custom listener name maps to PLAINTEXT through listener.security.protocol.map; advertised.listeners is matched by name', () => {
    const broker = config('listeners=CLIENT://127.0.0.1:9094\nlistener.security.protocol.map=CLIENT:PLAINTEXT\nadvertised.listeners=OTHER://x:1,CLIENT://public.example:19094');
    expect(broker.listen).toEqual({ host: '127.0.0.1', port: 9094 });
    expect(broker.advertised).toEqual({ host: 'public.example', port: 19094 });
  });

  test('an empty host listens on every interface and is advertised as the machine name', () => {
    const broker = config('listeners=PLAINTEXT://:9092');
    expect(broker.listen).toEqual({ host: '0.0.0.0', port: 9092 });
    expect(broker.advertised).toEqual({ host: hostname(), port: 9092 });
  });

  test('every broker listener is listened on, without a note; the first is the one --listen and the broker record name', () => {
    const { config: broker, warnings } = resolve('listeners=INTERNAL://127.0.0.1:9092,EXTERNAL://127.0.0.1:9094\nlistener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT');
    expect(broker.listen).toEqual({ host: '127.0.0.1', port: 9092 });
    expect(warnings).toEqual([]);
    expect(broker.listeners?.map((listener) => [listener.name, listener.protocol, listener.host, listener.port])).toEqual([
      ['INTERNAL', 'PLAINTEXT', '127.0.0.1', 9092],
      ['EXTERNAL', 'PLAINTEXT', '127.0.0.1', 9094],
    ]);
  });

  test('SSL and SASL listeners are taken with their settings (test/cli/security-settings.test.ts); unmapped names and only-controller listeners are one-line errors', () => {
    expect(config('listeners=SSL://:9093\nssl.keystore.location=/etc/ferry/server.pem').listeners?.[0]).toMatchObject({ name: 'SSL', protocol: 'SSL', host: '0.0.0.0', port: 9093 });
    expect(failure('listeners=PLAINTEXT://:9092,SASL_SSL://:9094')).toBe(
      'config: sasl.enabled.mechanisms: listener SASL_SSL uses SASL: list its mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; Ferry has no GSSAPI)',
    );
    expect(failure('listeners=CLIENT://:9092')).toBe('config FILE: listeners: listener CLIENT has no security protocol (add it to listener.security.protocol.map)');
    expect(failure('listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER')).toBe('config FILE: listeners names no broker listener (only controller listeners: Ferry has no controller)');
    expect(failure('listeners=localhost:9092')).toBe("config FILE: listeners: 'localhost:9092' is not NAME://host:port");
    expect(failure('advertised.listeners=PLAINTEXT://0.0.0.0:9092')).toBe('config FILE: advertised.listeners: PLAINTEXT cannot advertise the 0.0.0.0 meta-address');
  });
});

describe('precedence: defaults < config file < FERRY_* < flags', () => {
  test('each layer overrides the one before it', () => {
    const file = 'num.partitions=2\nmin.insync.replicas=2\ndefault.replication.factor=2';
    expect(config(file).partitions).toBe(2);
    const env = { FERRY_PARTITIONS: '3', FERRY_MIN_INSYNC_REPLICAS: '3' };
    const broker = config(file, { env, flags: { partitions: '4' } });
    expect(broker.partitions).toBe(4); // the flag over the environment over the file
    expect(broker.minInsyncReplicas).toBe(3); // the environment over the file
    expect(broker.replicationFactor).toBe(2); // the file over the default
    expect(resolveBrokerConfig({ flags: {}, env: {} }).config.partitions).toBe(1);
  });

  test('switches: the file turns auto-create off, a flag turns tiering off over the file', () => {
    expect(config('auto.create.topics.enable=false').autoCreate).toBe(false);
    expect(config('remote.log.storage.system.enable=true', { flags: { 'no-tier': true } }).tier).toBe(false);
    expect(config('ferry.unsafe.store=false', { env: { FERRY_UNSAFE_STORE: 'yes' } }).unsafeStore).toBe(true);
  });

  test('FERRY_CONFIG names the file when --config does not', () => {
    const path = configFile('server.properties', 'num.partitions=9');
    expect(resolveBrokerConfig({ flags: {}, env: { FERRY_CONFIG: path } }).config.partitions).toBe(9);
  });

  test('--listen over the file keeps the advertised address from being implied by the file', () => {
    expect(config('listeners=PLAINTEXT://:9092', { flags: { listen: '127.0.0.1:1234' } }).advertised).toBeNull();
  });
});

describe('typos and bad values stop the start in one line naming the key', () => {
  test('an unknown key, with the nearest known one', () => {
    expect(failure('num.partitons=3')).toBe('config FILE: num.partitons is not a Kafka or Ferry setting (did you mean num.partitions?)');
    expect(failure('ferry.lease.mss=3')).toBe('config FILE: ferry.lease.mss is not a Kafka or Ferry setting (did you mean ferry.lease.ms?)');
    expect(failure('log.retention.hour=3')).toBe('config FILE: log.retention.hour is not a Kafka or Ferry setting (did you mean log.retention.hours?)');
    expect(failure('something.else.entirely=1')).toBe('config FILE: something.else.entirely is not a Kafka or Ferry setting');
  });

  test("camelCase keys are JSON's, not a properties file's", () => {
    expect(failure('partitions=3')).toStartWith('config FILE: partitions is not a Kafka or Ferry setting');
  });

  test('bad values', () => {
    expect(failure('num.partitions=many')).toBe("config FILE: num.partitions must be an integer, got 'many'");
    expect(failure('num.partitions=0')).toBe("config FILE: num.partitions must be a positive integer, got '0'");
    expect(failure('num.partitions=')).toBe("config FILE: num.partitions must be an integer, got ''");
    expect(failure('log.segment.bytes=1024')).toBe("config FILE: log.segment.bytes must be an integer in [1048576, 2147483647], got '1024'");
    expect(failure('log.roll.hours=0')).toBe("config FILE: log.roll.hours must be a positive integer, got '0'");
    expect(failure('auto.create.topics.enable=yes')).toBe("config FILE: auto.create.topics.enable must be true or false, got 'yes'");
    expect(failure('log.dirs=/a,/b')).toBe("config FILE: log.dirs must name one directory (Ferry keeps one log directory), got '/a,/b'");
    expect(failure('queued.max.request.bytes=1000')).toBe('config FILE: queued.max.request.bytes must be at least the largest request, 104857600, got 1000');
    expect(failure('log.message.timestamp.type=BrokerTime')).toBe("config FILE: log.message.timestamp.type must be one of CreateTime, LogAppendTime, got 'BrokerTime'");
    expect(failure('compression.type=zstd')).toBe(
      "config FILE: compression.type (the topics' default compression.type): Invalid value zstd for configuration compression.type: only producer is supported: Ferry stores batches as the producer sent them (docs/design.md contract 1) and never recompresses",
    );
    expect(failure('delete.topic.enable=false')).toBe("config FILE: delete.topic.enable must be true (Ferry always lets topics be deleted), got 'false'");
    expect(failure('log.cleanup.policy=compact')).toBe("config FILE: log.cleanup.policy must be delete (Ferry has no log compaction yet), got 'compact'");
    expect(failure('process.roles=controller')).toBe("config FILE: process.roles is 'controller': Ferry runs the broker role (a KRaft controller has no Ferry equivalent)");
    expect(failure('ferry.cluster.store=memory://\nferry.peer.port=70000')).toBe("config FILE: ferry.peer.port must be a port (0 for any free one) or 'off', got '70000'");
  });

  test('settings that contradict each other are named by the engine rule they break', () => {
    expect(failure('log.retention.bytes=1048576\nlog.local.retention.bytes=2097152')).toStartWith('log settings: localRetentionBytes 2097152 keeps more than retentionBytes 1048576');
  });

  test('a malformed properties file says it was read as one', () => {
    expect(failure('a=\\uzzzz')).toBe("config FILE (read as a properties file: it does not end in .json or start with '{') line 1: malformed \\uXXXX escape '\\uzzzz'");
  });
});

describe('JSON config', () => {
  test('numbers as numbers, booleans as booleans, camelCase and Kafka names together', () => {
    const broker = config(
      JSON.stringify({ partitions: 5, nodeId: 3, 'log.segment.bytes': 2097152, autoCreate: false, 'remote.log.storage.system.enable': false, 'ferry.lease.ms': 2000, clusterStore: 'memory://' }),
      { name: 'broker.json' },
    );
    expect(broker).toMatchObject({ partitions: 5, nodeId: 3, autoCreate: false, tier: false, cluster: { store: 'memory://', leaseMs: 2000 } });
    expect(broker.log.segmentBytes).toBe(2097152);
  });

  test('a file starting with { is JSON whatever its name', () => {
    expect(config('{"num.partitions": 7}', { name: 'broker.conf' }).partitions).toBe(7);
  });

  test('typos, bad values and non-scalar values are errors naming the key', () => {
    expect(failure('{"partitons": 5}', 'broker.json')).toBe('config FILE: partitons is not a Kafka or Ferry setting (did you mean partitions?)');
    expect(failure('{"partitions": 1.5}', 'broker.json')).toBe("config FILE: partitions must be an integer, got '1.5'");
    expect(failure('{"autoCreate": "maybe"}', 'broker.json')).toBe("config FILE: autoCreate must be true or false, got 'maybe'");
    expect(failure('{"partitions": [1]}', 'broker.json')).toBe('config FILE: partitions must be a string, number or boolean, got [1]');
    expect(failure('{"partitions": 2, "num.partitions": 3}', 'broker.json')).toBe("config FILE: partitions and num.partitions set the same thing to different values ('2', '3')");
  });

  test('a file that is not JSON says it was read as JSON and why', () => {
    expect(failure('{ nope', 'broker.json')).toStartWith("config FILE (read as JSON: it ends in .json or starts with '{') is not JSON:");
  });
});

test('a missing config file is an error', () => {
  expect(() => resolveBrokerConfig({ flags: { config: '/nonexistent/server.properties' }, env: {} })).toThrow('config file /nonexistent/server.properties does not exist');
});
