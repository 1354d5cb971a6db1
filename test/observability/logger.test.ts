import { expect, test } from 'bun:test';
import { appendFileSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliLogger, parseLogLevel } from '../../src/cli/log-output.ts';
import { resolveBrokerConfig } from '../../src/cli/broker-config.ts';
import type { BrokerConfig } from '../../src/cli/broker-config.ts';
import { startFields } from '../../src/cli/start-fields.ts';
import { Engine } from '../../src/engine/index.ts';
import { CLEAN_SHUTDOWN_FILE } from '../../src/log/partition-log.ts';
import { lineLogger } from '../../src/observability/logger.ts';
import { type LogRecord, RecordLogger } from '../../src/observability/record-logger.ts';
import { REDACTED } from '../../src/observability/redact.ts';
import { CatchUpProgress, ProgressLines } from '../../src/observability/progress.ts';
import { ManualClock } from '../../src/util/clock.ts';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'ferry-log-'));
}

/** The JSON lines a pino CLI logger at `level` writes for `write`. */
function jsonLinesOf(level: Parameters<typeof parseLogLevel>[0], write: (logger: ReturnType<typeof cliLogger>) => void): Record<string, unknown>[] {
  const dir = tempDir();
  const path = join(dir, 'out.log');
  const fd = openSync(path, 'w');
  try {
    write(cliLogger({ level: parseLogLevel(level, 'test'), fd, pretty: false }));
  } finally {
    closeSync(fd);
  }
  const text = readFileSync(path, 'utf8');
  rmSync(dir, { recursive: true, force: true });
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

test('a JSON line carries level, time, component, msg and the partition as fields', () => {
  const lines = jsonLinesOf('info', (logger) => logger.child({ component: 'tier' }).info({ topic: 'orders', partition: 3 }, 'tiered orders-3'));
  expect(lines).toHaveLength(1);
  const [line] = lines;
  expect(line).toMatchObject({ level: 30, component: 'tier', topic: 'orders', partition: 3, msg: 'tiered orders-3' });
  expect(typeof line!.time).toBe('number');
});

test('--log-level warn drops info and below, keeps warn and above', () => {
  const lines = jsonLinesOf('warn', (logger) => {
    logger.debug({}, 'debug line');
    logger.info({}, 'info line');
    logger.warn({}, 'warn line');
    logger.error({}, 'error line');
  });
  expect(lines.map((line) => line.msg)).toEqual(['warn line', 'error line']);
  expect(jsonLinesOf('silent', (logger) => logger.fatal({}, 'not even this'))).toEqual([]);
});

test('the log level comes from --log-level, FERRY_LOG_LEVEL, else info; a bad one names its source', () => {
  expect(resolveBrokerConfig({ flags: { 'log-level': 'WARN' }, env: {} }).config.logLevel).toBe('warn');
  expect(resolveBrokerConfig({ flags: {}, env: { FERRY_LOG_LEVEL: 'debug' } }).config.logLevel).toBe('debug');
  expect(resolveBrokerConfig({ flags: {}, env: {} }).config.logLevel).toBe('info');
  expect(() => resolveBrokerConfig({ flags: { 'log-level': 'loud' }, env: {} })).toThrow(/--log-level.*loud.*not a log level/);
});

test('the start line holds the config but no secret: SASL and TLS passwords, inline keys, store credentials', () => {
  const { config } = resolveBrokerConfig({
    flags: { 'wal-store': 's3://AKIAEXAMPLE:S3-SECRET-IN-URL@bucket/wal?region=us-east-1&secretAccessKey=S3-SECRET-PARAM' },
    env: { AWS_SECRET_ACCESS_KEY: 'S3-SECRET-ENV' },
  });
  const withSecrets = {
    ...config,
    listeners: [
      {
        name: 'SASL_SSL',
        protocol: 'SASL_SSL',
        host: '0.0.0.0',
        port: 9093,
        tls: { keyPassword: 'TLS-KEY-PASSWORD', keystoreKey: '-----BEGIN PRIVATE KEY-----PEM-KEY-BYTES', clientAuth: 'none' },
        sasl: { mechanisms: ['PLAIN'], plainUsers: () => new Map([['alice', 'PLAIN-USER-PASSWORD']]) },
      },
    ],
    security: { interBroker: { listener: 'SASL_SSL', tls: null, sasl: { mechanism: 'SCRAM-SHA-512', username: 'broker', password: 'SASL-INTER-BROKER-PASSWORD' } } },
  } as unknown as BrokerConfig;
  const line = JSON.stringify(jsonLinesOf('info', (logger) => logger.info(startFields(withSecrets, '/data', 9092, 's3'), 'ferry broker 1 listening'))[0]);
  for (const secret of ['S3-SECRET-IN-URL', 'S3-SECRET-PARAM', 'S3-SECRET-ENV', 'TLS-KEY-PASSWORD', 'PEM-KEY-BYTES', 'PLAIN-USER-PASSWORD', 'SASL-INTER-BROKER-PASSWORD'])
    expect(line).not.toContain(secret);
  expect(line).toContain(REDACTED);
  expect(line).toContain('"username":"broker"'); // what is not secret stays: an operator needs to see who the broker is
  expect(line).toContain('bucket/wal');
  expect(line).toContain('"nodeId":1');
});

test('a recovery that cuts a torn tail says what it cut, with the partition as fields', async () => {
  const dir = tempDir();
  try {
    const first = await Engine.open({ directory: dir, logger: lineLogger(() => {}) });
    first.createTopic('t', { partitions: 1 });
    await first.produce('t', [{ value: 'a' }, { value: 'b' }], { partition: 0 });
    await first.close();
    const partitionDir = join(dir, 't-0');
    rmSync(join(partitionDir, CLEAN_SHUTDOWN_FILE)); // as after a crash
    const segment = readdirSync(partitionDir).find((name) => name.endsWith('.log'))!;
    appendFileSync(join(partitionDir, segment), Buffer.alloc(100, 0)); // a torn write
    const records: LogRecord[] = [];
    const reopened = await Engine.open({ directory: dir, logger: new RecordLogger('info', (record) => records.push(record)) });
    await reopened.close();
    const recovery = records.filter((record) => record.fields.component === 'log');
    expect(recovery).toHaveLength(1);
    expect(recovery[0]).toMatchObject({ level: 'warn', fields: { topic: 't', partition: 0, truncatedBytes: 100, logEndOffset: 2 } });
    expect(recovery[0]!.msg).toContain('cut 100 bytes');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('progress lines: the first at once, then at most one per interval, a new spell after finish', () => {
  const clock = new ManualClock();
  const records: LogRecord[] = [];
  const progress = new ProgressLines(new RecordLogger('info', (record) => records.push(record)), clock, 1000);
  progress.update('t-0', { topic: 't', partition: 0 }, 1, 10, 'one');
  clock.advance(999);
  progress.update('t-0', { topic: 't', partition: 0 }, 5, 10, 'five');
  clock.advance(1);
  progress.update('t-0', { topic: 't', partition: 0 }, 6, 10, 'six');
  expect(progress.finish('t-0')).toBe(true);
  progress.update('t-0', { topic: 't', partition: 0 }, 1, 3, 'again');
  expect(records.map((record) => [record.msg, record.fields.done, record.fields.total])).toEqual([
    ['one', 1, 10],
    ['six', 6, 10],
    ['again', 1, 3],
  ]);
});

test('catch-up lines: a follower far behind its leader says how far it got, then once that it caught up; one at the tail says nothing', () => {
  const clock = new ManualClock();
  const records: LogRecord[] = [];
  const catchUp = new CatchUpProgress(new RecordLogger('info', (record) => records.push(record)), clock, 100, 1000);
  catchUp.applied('t', 0, 10, 20); // at the tail: nothing to say
  catchUp.applied('t', 1, 10, null); // the leader not heard yet: nothing either
  catchUp.applied('t', 0, 100, 5_000);
  clock.advance(500);
  catchUp.applied('t', 0, 2_000, 5_000); // within the interval: quiet
  clock.advance(500);
  catchUp.applied('t', 0, 3_000, 5_000);
  catchUp.applied('t', 0, 4_950, 5_000); // within 100 of the leader: caught up
  catchUp.applied('t', 0, 5_000, 5_000); // and said once
  expect(records.map((record) => [record.msg, record.fields.topic, record.fields.partition, record.fields.done ?? record.fields.offset])).toEqual([
    ["catching up on t-0: at offset 100 of the leader's 5000", 't', 0, 100],
    ["catching up on t-0: at offset 3000 of the leader's 5000", 't', 0, 3_000],
    ['t-0 caught up with its leader at offset 4950', 't', 0, 4_950],
  ]);
});
