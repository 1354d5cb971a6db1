// A broker refuses to start on an object store that ignores conditional writes (finding 15):
// s3rver accepts a second put-if-absent; the conditional proxy in front of it enforces them.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { useS3Endpoints } from '../support/s3-endpoints.ts';
import { S3RVER_ACCESS_KEY_ID, S3RVER_REGION, S3RVER_SECRET_ACCESS_KEY } from '../support/s3rver.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);

const endpoints = useS3Endpoints();
const brokers: BrokerProcess[] = [];
afterAll(() => killAll(brokers));
const ENV = { AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY };
let buckets = 0;

/** A fresh bucket on s3rver, as an s3:// URL reached through `endpoint`. */
async function bucketUrl(endpoint: string): Promise<string> {
  const bucket = `unsafe-store-${++buckets}`;
  await endpoints.s3rver().createBucket(bucket);
  return `s3://${bucket}/ferry?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${endpoint}`;
}

async function clusterBroker(endpoint: string, extra: string[] = []): Promise<BrokerProcess> {
  const url = await bucketUrl(endpoint);
  const broker = new BrokerProcess({ nodeId: 1, data: tempDir(), args: ['--wal-store', url, '--cluster-store', url, '--lease-ms', '2000', '--scan-interval-ms', '200', ...extra], env: ENV });
  brokers.push(broker);
  return broker;
}

test('a cluster broker on a store that accepts a second put-if-absent refuses to start, in one line, exit code 1', async () => {
  const broker = await clusterBroker(endpoints.s3rver().endpoint);
  const failure = await broker.start().then(
    () => null,
    (error: Error) => error,
  );
  expect(failure?.message).toContain('exited (1) before listening');
  const lines = broker
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '');
  expect(lines).toEqual([expect.stringMatching(/^ferry broker: broker 1 cannot start: the WAL store \(s3\) does not enforce conditional writes: a second put with If-None-Match: \* succeeded/)]);
});

test('with --unsafe-store the same broker starts, and says it is unsafe', async () => {
  const broker = await clusterBroker(endpoints.s3rver().endpoint, ['--unsafe-store']);
  await broker.start();
  expect(broker.output()).toContain('unsafe store');
  expect(await broker.terminate()).toBe(0);
});

test('a store that enforces conditional writes (the proxy in front of s3rver) is accepted', async () => {
  const broker = await clusterBroker(endpoints.proxy().endpoint);
  await broker.start();
  expect(broker.output()).not.toContain('unsafe store');
  const code = await broker.terminate();
  expect(code).toBe(0);
});
