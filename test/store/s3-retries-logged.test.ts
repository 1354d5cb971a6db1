import { expect, test } from 'bun:test';
import { type LogRecord, RecordLogger } from '../../src/observability/record-logger.ts';
import { StoreError } from '../../src/store/errors.ts';
import { S3Requests } from '../../src/store/s3-requests.ts';
import { retryPolicy } from '../../src/store/s3-retry.ts';
import { StatsRecorder } from '../../src/store/stats.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';

const ATTEMPTS = 3;

function requests(records: LogRecord[]): S3Requests {
  return new S3Requests({
    clock: systemClock,
    random: new SeededRandom(1),
    stats: new StatsRecorder(),
    timeoutMs: 1000,
    policy: { ...retryPolicy(ATTEMPTS), baseMs: 1, capMs: 1 },
    logger: new RecordLogger('info', (record) => records.push(record)),
  });
}

const context = { operation: 'PutObject', bucket: 'wal', key: 'p/wal/w/0/1' };

test('a request that fails through all its retries is logged once, as an error of component store', async () => {
  const records: LogRecord[] = [];
  let sent = 0;
  const failing = requests(records).run({
    requestClass: 'put',
    context,
    send: async () => {
      sent++;
      throw new StoreError('Unavailable', 'SlowDown');
    },
  });
  await expect(failing).rejects.toThrow('SlowDown');
  expect(sent).toBe(ATTEMPTS);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ level: 'error', fields: { component: 'store', operation: 'PutObject', bucket: 'wal', key: 'p/wal/w/0/1', attempts: ATTEMPTS } });
});

test('a failure that is not retried (a refused request) and a retry that succeeds log nothing', async () => {
  const records: LogRecord[] = [];
  await expect(
    requests(records).run({
      requestClass: 'put',
      context,
      send: async () => {
        throw new StoreError('AccessDenied', 'denied');
      },
    }),
  ).rejects.toThrow('denied');
  let sent = 0;
  await requests(records).run({
    requestClass: 'put',
    context,
    send: async () => {
      if (sent++ === 0) throw new StoreError('Unavailable', 'blip');
      return 'ok';
    },
  });
  expect(records).toHaveLength(0);
});
