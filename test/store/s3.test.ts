// The S3 backend against real HTTP: the conformance suite on bare s3rver and on the conditional
// proxy in front of it, then S3-specific cases (retries, deadlines, unknown outcomes, credentials,
// URLs, part limits). Which case runs on which endpoint: docs/object-store-s3.md.
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { isStoreError } from '../../src/store/errors.ts';
import { MULTIPART_PART_BYTES_MAX } from '../../src/store/object-store.ts';
import { S3Store, type S3StoreDeps } from '../../src/store/s3.ts';
import { judge } from '../../src/store/conditional-write.ts';
import { BUN_S3_DEFAULT, MAX_ATTEMPTS_DEFAULT, REQUEST_TIMEOUT_MS_DEFAULT, parseS3Url } from '../../src/store/s3-config.ts';
import { RETRY_BACKOFF_BASE_MS } from '../../src/store/s3-retry.ts';
import { systemClock, type Clock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { startConditionalS3Proxy, type ConditionalS3Proxy } from '../support/conditional-s3-proxy.ts';
import { S3RVER_ACCESS_KEY_ID, S3RVER_REGION, S3RVER_SECRET_ACCESS_KEY, startS3rver, type S3rver } from '../support/s3rver.ts';
import { storeContract, storeErrorOf, type OpenedStore } from './contract.ts';

// The contract's 2500-key listing and 1500-key deleteMany take several seconds on s3rver.
setDefaultTimeout(60_000);

let s3rver: S3rver;
let proxy: ConditionalS3Proxy;
let bucketCount = 0;
const ENV = { AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY };

beforeAll(async () => {
  s3rver = await startS3rver();
  proxy = startConditionalS3Proxy({ upstream: s3rver.endpoint, accessKeyId: S3RVER_ACCESS_KEY_ID });
});

afterAll(async () => {
  await proxy?.stop();
  await s3rver?.stop();
});

async function openStore(endpoint: () => string, parameters = ''): Promise<OpenedStore> {
  const bucket = `ferry-test-${++bucketCount}`;
  await s3rver.createBucket(bucket);
  const url = new URL(`s3://${bucket}/ferry/prefix?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${endpoint()}${parameters}`);
  const store = S3Store.fromUrl(url, ENV);
  return { store, cleanup: () => store.close() };
}

// Bare s3rver: the whole suite but conditional writes, with S3's own page and batch sizes, plain
// GETs and PUTs through the Bun path (the default).
storeContract('S3Store on s3rver (Bun path for plain GET/PUT)', () => openStore(() => s3rver.endpoint), { conditional: false });
// The proxy: everything, conditional writes included, through the SDK alone. Fewer keys in the
// listing and deleteMany cases (still several pages and two DeleteObjects batches): bare s3rver
// already runs them at full size, and the proxy's per-key serialisation makes them slow.
storeContract('S3Store on the conditional proxy (SDK only)', () => openStore(() => proxy.endpoint, '&bunS3=false'), { conditional: true, listKeys: 1200, deleteKeys: 1200 });

// ---------------------------------------------------------------------------------------------
// S3-specific behaviour: retries, timeouts, unknown outcomes, credentials, URLs, part limits.

const encoder = new TextEncoder();
const text = (value: string): Uint8Array => encoder.encode(value);

/** A store on its own fresh bucket behind `endpoint`, with URL `parameters` appended. */
async function s3Store(endpoint: string, parameters = '', env: Record<string, string> = ENV, deps: S3StoreDeps = {}): Promise<S3Store> {
  const bucket = `ferry-test-${++bucketCount}`;
  await s3rver.createBucket(bucket);
  return S3Store.fromUrl(new URL(`s3://${bucket}/p?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${endpoint}${parameters}`), env, deps);
}

/** The system clock, recording every delay asked of it (backoff waits and attempt deadlines). */
function recordingClock(): Clock & { delaysMs: number[] } {
  const delaysMs: number[] = [];
  return {
    delaysMs,
    nowMs: () => systemClock.nowMs(),
    monotonicMs: () => systemClock.monotonicMs(),
    setTimer(delayMs: number, callback: () => void, background?: boolean) {
      delaysMs.push(delayMs);
      return systemClock.setTimer(delayMs, callback, background);
    },
    immediate: (callback: () => void) => systemClock.immediate(callback),
  };
}

describe('S3Store retries and timeouts (conditional proxy with faults)', () => {
  afterEach(() => proxy.clearFaults());

  for (const path of ['bunS3=true', 'bunS3=false']) {
    test(`a PUT through two 503 SlowDown answers succeeds, counting 3 PUT requests and jittered backoff (${path})`, async () => {
      const clock = recordingClock();
      const store = await s3Store(proxy.endpoint, `&${path}&requestTimeoutMs=5000`, ENV, { clock, random: new SeededRandom(7) });
      proxy.inject({ method: 'PUT', path: /\/p\/slow$/, count: 2, action: { kind: 'SlowDown' } });
      await store.put('slow', text('eventually'));
      expect(store.stats().requests.put).toBe(3);
      expect(store.stats().errors).toEqual({ Throttled: 2 });
      const backoffsMs = clock.delaysMs.filter((delayMs) => delayMs !== 5000);
      expect(backoffsMs.length).toBe(2);
      expect(backoffsMs[0]!).toBeLessThan(RETRY_BACKOFF_BASE_MS);
      expect(backoffsMs[1]!).toBeLessThan(2 * RETRY_BACKOFF_BASE_MS);
      expect(new TextDecoder().decode((await store.get('slow')).body)).toBe('eventually');
      await store.close();
    });
  }

  test('retries are bounded: a key that always answers 503 is Throttled after maxAttempts', async () => {
    const store = await s3Store(proxy.endpoint, '&maxAttempts=3');
    proxy.inject({ method: 'PUT', path: /\/p\/hot$/, count: 100, action: { kind: 'SlowDown' } });
    const error = await storeErrorOf(store.put('hot', text('x'), { ifNoneMatch: '*' }), 'Throttled');
    expect(error.message).toContain('SlowDown');
    expect(store.stats().requests.put).toBe(3);
    expect(store.stats().requests.get).toBe(0); // a 503 is a refusal, not an unknown outcome: no read-back
    await store.close();
  });

  test('a 500 on a plain GET is retried; a 500 on a conditional PUT is resolved by reading back, then resent', async () => {
    const store = await s3Store(proxy.endpoint);
    await store.put('g', text('x'));
    proxy.inject({ method: 'GET', path: /\/p\/g$/, count: 1, action: { kind: 'InternalError' } });
    expect((await store.get('g')).body).toEqual(text('x'));
    proxy.inject({ method: 'PUT', path: /\/p\/c$/, count: 1, action: { kind: 'InternalError' } });
    await store.put('c', text('created'), { ifNoneMatch: '*' });
    expect(store.stats().requests).toMatchObject({ put: 3, get: 3 }); // get: retry pair + the read-back
    expect(new TextDecoder().decode((await store.get('c')).body)).toBe('created');
    await store.close();
  });

  test('a request with no answer within requestTimeoutMs is Timeout naming the deadline', async () => {
    const store = await s3Store(proxy.endpoint, '&requestTimeoutMs=200&maxAttempts=1');
    await store.put('slow-get', text('x'));
    proxy.inject({ method: 'GET', path: /\/p\/slow-get$/, count: 1, action: { kind: 'LoseResponse', holdMs: 1500 } });
    const error = await storeErrorOf(store.get('slow-get'), 'Timeout');
    expect(error.message).toContain('200 ms');
    expect(error.retriable).toBe(true);
    await store.close();
  });

  test("a caller's abort is Timeout and is not retried", async () => {
    const store = await s3Store(proxy.endpoint, '&requestTimeoutMs=5000');
    proxy.inject({ method: 'PUT', path: /\/p\/aborted$/, count: 1, action: { kind: 'LoseResponse', holdMs: 1500 } });
    const error = await storeErrorOf(store.put('aborted', text('x'), { ifNoneMatch: '*', signal: AbortSignal.timeout(100) }), 'Timeout');
    expect(error.message).toContain('aborted by the caller');
    expect(store.stats().requests).toMatchObject({ put: 1, get: 0 });
    await storeErrorOf(store.get('aborted', { signal: AbortSignal.abort() }), 'Timeout');
    expect(store.stats().requests.get).toBe(0);
    await store.close();
  });

  test('put-if-absent whose answer is lost is resolved by reading back: it succeeds once; a rival with other bytes is PreconditionFailed', async () => {
    const store = await s3Store(proxy.endpoint, '&requestTimeoutMs=300');
    proxy.inject({ method: 'PUT', path: /\/p\/wal\/1$/, count: 1, action: { kind: 'LoseResponse', holdMs: 1500 } });
    const ours = await store.put('wal/1', text('writer A'), { ifNoneMatch: '*' });
    expect(ours.etag).toBe((await store.head('wal/1'))!.etag);
    expect(store.stats().requests).toMatchObject({ put: 1, get: 1 }); // never resent
    const rival = await storeErrorOf(store.put('wal/1', text('writer B'), { ifNoneMatch: '*' }), 'PreconditionFailed');
    expect(rival.key).toBe('wal/1');
    expect(new TextDecoder().decode((await store.get('wal/1')).body)).toBe('writer A');
    await store.close();
  });

  test('if-match whose answer is lost is resolved by reading back', async () => {
    const store = await s3Store(proxy.endpoint, '&requestTimeoutMs=300');
    const first = await store.put('meta', text('epoch 1'));
    proxy.inject({ method: 'PUT', path: /\/p\/meta$/, count: 1, action: { kind: 'LoseResponse', holdMs: 1500 } });
    const second = await store.put('meta', text('epoch 2'), { ifMatch: first.etag });
    expect(second.etag).not.toBe(first.etag);
    await storeErrorOf(store.put('meta', text('epoch 2 again'), { ifMatch: first.etag }), 'PreconditionFailed');
    await store.close();
  });

  test('a multipart completion whose answer is lost is resolved: the object is there and the upload gone', async () => {
    const store = await s3Store(proxy.endpoint, '&requestTimeoutMs=500');
    const upload = await store.createMultipartUpload('mp/lost', { ifNoneMatch: '*' });
    const part = await upload.uploadPart(1, text('whole object'));
    proxy.inject({ method: 'POST', path: /\/p\/mp\/lost$/, count: 1, action: { kind: 'LoseResponse', holdMs: 1500 } });
    const { etag } = await upload.complete([part]);
    expect(etag).toBe((await store.head('mp/lost'))!.etag);
    expect(store.stats().requests).toMatchObject({ multipartComplete: 1, head: 2, list: 1 });
    await store.close();
  });

  test('a conditional PUT to a port nobody listens on is retried without a read-back (the request never left)', async () => {
    const store = S3Store.fromUrl(new URL(`s3://ferry-test/p?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=http://127.0.0.1:${await closedPort()}&maxAttempts=2`), ENV);
    const error = await storeErrorOf(store.put('k', text('x'), { ifNoneMatch: '*' }), 'Unavailable');
    expect(error.message).toMatch(/ECONNREFUSED|ConnectionRefused|refused/i);
    expect(store.stats().requests).toMatchObject({ put: 2, get: 0 });
    await store.close();
  });
});

describe('S3Store bad input and bad configuration', () => {
  for (const path of ['bunS3=true', 'bunS3=false']) {
    test(`a wrong access key is AccessDenied naming the credentials (${path})`, async () => {
      for (const endpoint of [s3rver.endpoint, proxy.endpoint]) {
        const store = await s3Store(endpoint, `&${path}`, { AWS_ACCESS_KEY_ID: 'NOT-A-KEY', AWS_SECRET_ACCESS_KEY: 'whatever' });
        for (const attempt of [() => store.put('k', text('x')), () => store.get('k'), () => store.put('k', text('x'), { ifNoneMatch: '*' }), () => store.list('')]) {
          const error = await storeErrorOf(attempt(), 'AccessDenied');
          expect(error.message).toContain('AWS_ACCESS_KEY_ID');
          expect(error.retriable).toBe(false);
        }
        expect(store.stats().requests.put).toBe(2); // not retried
        await store.close();
      }
    });

    test(`a missing bucket is NotFound naming the bucket (${path})`, async () => {
      const url = new URL(`s3://no-such-bucket/p?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${s3rver.endpoint}&${path}`);
      const store = S3Store.fromUrl(url, ENV);
      for (const attempt of [() => store.put('k', text('x')), () => store.get('k'), () => store.list(''), () => store.createMultipartUpload('k'), () => store.delete('k')]) {
        const error = await storeErrorOf(attempt(), 'NotFound');
        expect(error.message).toContain('bucket no-such-bucket does not exist');
      }
      await store.close();
    });
  }

  test('a part over 5 GiB is InvalidArgument before anything is sent', async () => {
    const store = await s3Store(s3rver.endpoint);
    const upload = await store.createMultipartUpload('huge');
    const declared = new Uint8Array(16);
    Object.defineProperty(declared, 'length', { value: MULTIPART_PART_BYTES_MAX + 1 });
    Object.defineProperty(declared, 'byteLength', { value: MULTIPART_PART_BYTES_MAX + 1 });
    const error = await storeErrorOf(upload.uploadPart(1, declared), 'InvalidArgument');
    expect(error.message).toContain(String(MULTIPART_PART_BYTES_MAX));
    expect(store.stats().requests.uploadPart).toBe(0);
    await upload.abort();
    await store.close();
  });

  test('a too-small middle part is InvalidArgument at complete, and nothing becomes visible', async () => {
    const store = await s3Store(s3rver.endpoint);
    const upload = await store.createMultipartUpload('small-parts');
    const parts = [await upload.uploadPart(1, text('tiny')), await upload.uploadPart(2, text('last'))];
    expect(await store.head('small-parts')).toBeNull();
    const error = await storeErrorOf(upload.complete(parts), 'InvalidArgument');
    expect(error.message).toContain('part 1 is 4 bytes');
    expect(store.stats().requests.multipartComplete).toBe(0);
    await storeErrorOf(store.get('small-parts'), 'NotFound');
    expect((await store.list('')).objects).toEqual([]);
    await upload.abort();
    await store.close();
  });
});

describe('S3Store.fromUrl', () => {
  const REGION_ENV = { AWS_REGION: 'eu-west-1' };
  const rejected: [url: string, problem: string][] = [
    ['http://bucket/prefix?region=us-east-1', 'scheme must be s3:'],
    ['s3:///prefix?region=us-east-1', 'no bucket name'],
    ['s3://Bad_Bucket/?region=us-east-1', 'is not valid'],
    ['s3://ab/?region=us-east-1', 'is not valid'],
    ['s3://bucket-/?region=us-east-1', 'is not valid'],
    ['s3://buck..et/?region=us-east-1', 'is not valid'],
    ['s3://bucket/?region=us-east-1&colour=blue', 'unknown parameter "colour"'],
    ['s3://bucket/?region=us-east-1&region=eu-west-1', 'given twice'],
    ['s3://key:secret@bucket/?region=us-east-1', 'credentials do not belong in the URL'],
    ['s3://bucket/?region=us-east-1&endpoint=http://minio:secret@127.0.0.1:9000', 'credentials do not belong in the endpoint'],
    ['s3://bucket:9000/?region=us-east-1', 'takes no port'],
    ['s3://bucket/#part?region=us-east-1', 'fragment'],
    ['s3://bucket/a//b?region=us-east-1', 'empty path segment'],
    ['s3://bucket/%E0%A4%A?region=us-east-1', 'percent-encoding'],
    ['s3://bucket/?region=us-east-1&endpoint=ftp://127.0.0.1', 'must be http: or https:'],
    ['s3://bucket/?region=us-east-1&endpoint=not%20a%20url', 'is not a URL'],
    ['s3://bucket/?region=us-east-1&forcePathStyle=yes', 'forcePathStyle must be true or false'],
    ['s3://bucket/?region=us-east-1&bunS3=1', 'bunS3 must be true or false'],
    ['s3://bucket/?region=us-east-1&requestTimeoutMs=0', 'requestTimeoutMs must be an integer in [1, 600000]'],
    ['s3://bucket/?region=us-east-1&requestTimeoutMs=-5', 'requestTimeoutMs must be a whole number'],
    ['s3://bucket/?region=us-east-1&maxAttempts=11', 'maxAttempts must be an integer in [1, 10]'],
    ['s3://bucket/?region=us-east-1&concurrency=lots', 'concurrency must be a whole number'],
    ['s3://logs--use1-az4--x-s3/?region=us-east-1&forcePathStyle=true', 'only virtual-hosted style'],
    ['s3://--x-s3/?region=us-east-1', 'must look like name--azid--x-s3'],
  ];
  test('a refused URL is quoted without the value of a secret-looking parameter', () => {
    expect(() => S3Store.fromUrl(new URL('s3://bucket/?region=us-east-1&secretAccessKey=hunter2'), REGION_ENV)).toThrow(/unknown parameter "secretAccessKey"/);
    expect(() => S3Store.fromUrl(new URL('s3://bucket/?region=us-east-1&secretAccessKey=hunter2'), REGION_ENV)).not.toThrow(/hunter2/);
  });
  for (const [url, problem] of rejected) {
    test(`rejects ${url}`, () => {
      let caught: unknown;
      try {
        S3Store.fromUrl(new URL(url), REGION_ENV);
      } catch (error) {
        caught = error;
      }
      expect(isStoreError(caught, 'InvalidArgument')).toBe(true);
      expect((caught as Error).message).toContain(problem);
      expect((caught as Error).message).not.toContain('secret');
    });
  }

  test('no region in the URL or the environment is InvalidArgument', () => {
    expect(() => S3Store.fromUrl(new URL('s3://bucket/'), {})).toThrow(/no region/);
  });

  test('defaults, the prefix, and the environment', () => {
    const env = { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9/', AWS_ACCESS_KEY_ID: 'id', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'token' };
    const config = parseS3Url(new URL('s3://my.bucket/a/b%20c?concurrency=8'), env);
    expect(config).toEqual({
      bucket: 'my.bucket',
      prefix: 'a/b c/',
      region: 'eu-west-1',
      endpoint: 'http://127.0.0.1:9',
      forcePathStyle: false,
      requestTimeoutMs: REQUEST_TIMEOUT_MS_DEFAULT,
      maxAttempts: MAX_ATTEMPTS_DEFAULT,
      concurrency: 8,
      bunS3: BUN_S3_DEFAULT,
      credentials: { accessKeyId: 'id', secretAccessKey: 'secret', sessionToken: 'token' },
    });
    const directory = parseS3Url(new URL('s3://logs--use1-az4--x-s3?region=us-east-1&bunS3=true'), {});
    expect(directory).toMatchObject({ bucket: 'logs--use1-az4--x-s3', prefix: '', bunS3: false, forcePathStyle: false });
    expect(directory.credentials).toBeUndefined(); // the SDK's default chain decides
  });
});

describe('unknown outcomes: the verdict of a read-back', () => {
  const write = (options: { ifNoneMatch?: '*'; ifMatch?: string }) => ({ key: 'k', objectKey: 'p/k', body: text('ours'), ...options });
  test.each([
    ['if-none-match, absent: not landed, resend', write({ ifNoneMatch: '*' }), null, { landed: false, retry: true }],
    ['if-none-match, our bytes: landed', write({ ifNoneMatch: '*' }), { body: text('ours'), etag: 'e1' }, { landed: true, etag: 'e1' }],
    ['if-none-match, other bytes: lost', write({ ifNoneMatch: '*' }), { body: text('theirs'), etag: 'e2' }, { landed: false, retry: false }],
    ['if-match, absent: lost', write({ ifMatch: 'e0' }), null, { landed: false, retry: false }],
    ['if-match, still the old ETag: not landed, resend', write({ ifMatch: 'e0' }), { body: text('old'), etag: 'e0' }, { landed: false, retry: true }],
    ['if-match, our bytes: landed', write({ ifMatch: 'e0' }), { body: text('ours'), etag: 'e3' }, { landed: true, etag: 'e3' }],
    ['if-match, other bytes and ETag: lost', write({ ifMatch: 'e0' }), { body: text('theirs'), etag: 'e4' }, { landed: false, retry: false }],
  ] as const)('%s', (_name, conditional, current, verdict) => {
    expect(judge(conditional, current)).toEqual(verdict);
  });
});

/** A loopback port that was free a moment ago: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  return port;
}
