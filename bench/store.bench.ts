/**
 * Object store PUT and GET: latency (p50/p99, HDR histogram) and throughput (MB/s) for 64 KiB and
 * 4 MiB objects on each backend. The S3 backend runs against s3rver, started by this bench on a
 * loopback port, three ways side by side in the same run: S3Store on @aws-sdk/client-s3 only,
 * S3Store with its Bun path (Bun.S3Client's signer + Bun's fetch for unconditional GET/PUT), and
 * Bun.S3Client's own write()/arrayBuffer(). Rounds rotate the order of the backends, so machine
 * noise hits them all; throughput and ratios are medians over rounds.
 *
 * s3rver is a Node process writing files, so absolute S3 numbers are s3rver's; what carries over
 * to AWS is the difference between clients, which is client CPU per request.
 */
import { MemoryStore } from '../src/store/memory.ts';
import { FileStore } from '../src/store/file.ts';
import type { ObjectStore } from '../src/store/object-store.ts';
import { S3Store } from '../src/store/s3.ts';
import { S3RVER_ACCESS_KEY_ID, S3RVER_REGION, S3RVER_SECRET_ACCESS_KEY, startS3rver, type S3rver } from '../test/support/s3rver.ts';
import { parseBenchArgs } from './lib/args.ts';
import { LatencyRecorder } from './lib/latency.ts';
import { SeededRandom } from './lib/random.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatBytes, formatSignificant, KIB_BYTES, mbPerSecond, MIB_BYTES } from './lib/units.ts';

const OBJECT_SIZES_BYTES = [64 * KIB_BYTES, 4 * MIB_BYTES] as const;
/** Objects per round per phase: enough samples for a p99 over the rounds, few enough to stay under two minutes on s3rver. */
const OPS_PER_ROUND: Record<number, number> = { [64 * KIB_BYTES]: 50, [4 * MIB_BYTES]: 8 };
const ROUND_COUNT = 5;
const QUICK_ROUND_COUNT = 2;
const QUICK_OPS_DIVISOR = 4;
/** Requests in flight in the throughput phase: what a WAL writer keeps in flight (maxInFlight). */
const THROUGHPUT_CONCURRENCY = 8;
const PAYLOAD_SEED = 0x57083;
const BUCKET = 'ferry-bench';

const USAGE = `
bun bench/store.bench.ts [--quick]

PUT and GET latency (p50/p99) and throughput (MB/s, one at a time and ${THROUGHPUT_CONCURRENCY} in flight) for
64 KiB and 4 MiB objects on the memory store (s3-express latency model), the file store, and the
S3 store against a local s3rver: @aws-sdk/client-s3, S3Store's Bun path, and Bun.S3Client, side by side.
  --quick   ${QUICK_ROUND_COUNT} rounds and a quarter of the objects (a smoke run; numbers are noisier)
  --help    this text`;

/** One way of putting and getting bytes; the S3 variants all talk to the same s3rver. */
interface Target {
  readonly name: string;
  put(key: string, body: Uint8Array): Promise<unknown>;
  /** Resolves to the number of bytes read. */
  get(key: string): Promise<number>;
  close(): Promise<void>;
}

function storeTarget(name: string, store: ObjectStore): Target {
  return {
    name,
    put: (key, body) => store.put(key, body),
    get: async (key) => (await store.get(key)).body.byteLength,
    close: () => store.close(),
  };
}

function bunClientTarget(s3rver: S3rver): Target {
  const client = new Bun.S3Client({ endpoint: s3rver.endpoint, bucket: BUCKET, region: S3RVER_REGION, accessKeyId: S3RVER_ACCESS_KEY_ID, secretAccessKey: S3RVER_SECRET_ACCESS_KEY });
  return {
    name: 's3: Bun.S3Client',
    put: (key, body) => client.write(`bun-client/${key}`, body),
    get: async (key) => (await client.file(`bun-client/${key}`).arrayBuffer()).byteLength,
    close: async () => undefined,
  };
}

async function openTargets(s3rver: S3rver, fileRoot: string): Promise<Target[]> {
  const env = { AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY };
  const s3Url = (prefix: string, bunS3: boolean): URL =>
    new URL(`s3://${BUCKET}/${prefix}?region=${S3RVER_REGION}&endpoint=${s3rver.endpoint}&forcePathStyle=true&bunS3=${bunS3}&requestTimeoutMs=30000`);
  return [
    storeTarget('memory (s3-express model)', new MemoryStore({ latency: 's3-express' })),
    storeTarget('file (fsync)', await FileStore.open(fileRoot)),
    storeTarget('s3: @aws-sdk/client-s3', S3Store.fromUrl(s3Url('sdk', false), env)),
    storeTarget('s3: S3Store Bun path', S3Store.fromUrl(s3Url('bun-path', true), env)),
    bunClientTarget(s3rver),
  ];
}

/** Samples and per-round numbers of one target at one object size. */
interface CaseResult {
  readonly putLatency: LatencyRecorder;
  readonly getLatency: LatencyRecorder;
  /** Per round: mean milliseconds per request, and MB/s one at a time and with THROUGHPUT_CONCURRENCY in flight. */
  readonly putMeanMs: number[];
  readonly getMeanMs: number[];
  readonly putMbps: number[];
  readonly getMbps: number[];
  readonly putMbpsConcurrent: number[];
  readonly getMbpsConcurrent: number[];
}

function emptyCase(): CaseResult {
  return { putLatency: new LatencyRecorder(), getLatency: new LatencyRecorder(), putMeanMs: [], getMeanMs: [], putMbps: [], getMbps: [], putMbpsConcurrent: [], getMbpsConcurrent: [] };
}

/** `count` requests one after another, each timed; returns the elapsed milliseconds. */
async function sequential(count: number, recorder: LatencyRecorder, request: (index: number) => Promise<unknown>): Promise<number> {
  const startMs = performance.now();
  for (let index = 0; index < count; index++) {
    const requestStartMs = performance.now();
    await request(index);
    recorder.recordMs(performance.now() - requestStartMs);
  }
  return performance.now() - startMs;
}

/** `count` requests with `concurrency` in flight; returns the elapsed milliseconds. */
async function concurrent(count: number, concurrency: number, request: (index: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const startMs = performance.now();
  const worker = async (): Promise<void> => {
    while (next < count) await request(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return performance.now() - startMs;
}

async function runRound(target: Target, body: Uint8Array, count: number, result: CaseResult, round: number): Promise<void> {
  const key = (index: number): string => `${body.byteLength}/${round}/${index}`;
  const bytes = body.byteLength * count;
  const putMs = await sequential(count, result.putLatency, (index) => target.put(key(index), body));
  const getMs = await sequential(count, result.getLatency, async (index) => {
    if ((await target.get(key(index))) !== body.byteLength) throw new Error(`${target.name}: short read of ${key(index)}`);
  });
  result.putMeanMs.push(putMs / count);
  result.getMeanMs.push(getMs / count);
  result.putMbps.push(mbPerSecond(bytes, putMs));
  result.getMbps.push(mbPerSecond(bytes, getMs));
  const concurrentKey = (index: number): string => `${key(index)}/c`;
  result.putMbpsConcurrent.push(mbPerSecond(bytes, await concurrent(count, THROUGHPUT_CONCURRENCY, (index) => target.put(concurrentKey(index), body))));
  result.getMbpsConcurrent.push(mbPerSecond(bytes, await concurrent(count, THROUGHPUT_CONCURRENCY, (index) => target.get(concurrentKey(index)))));
}

/** Every target at every size, `rounds` times, the targets' order rotating each round. */
async function measure(targets: readonly Target[], rounds: number, opsDivisor: number): Promise<Map<string, CaseResult>> {
  const results = new Map<string, CaseResult>();
  const random = new SeededRandom(PAYLOAD_SEED);
  for (const size of OBJECT_SIZES_BYTES) {
    const body = random.fill(new Uint8Array(size));
    const count = Math.max(2, Math.floor(OPS_PER_ROUND[size]! / opsDivisor));
    // An untimed round first: connections, and the JIT on each client's code (the SDK's middleware stack needs ~100 requests).
    for (const target of targets) await runRound(target, body, count, emptyCase(), -1);
    for (let round = 0; round < rounds; round++) {
      for (let index = 0; index < targets.length; index++) {
        const target = targets[(index + round) % targets.length]!;
        const name = `${target.name}|${size}`;
        if (!results.has(name)) results.set(name, emptyCase());
        await runRound(target, body, count, results.get(name)!, round);
      }
    }
  }
  return results;
}

function report(targets: readonly Target[], results: Map<string, CaseResult>): void {
  const rows: string[][] = [];
  for (const size of OBJECT_SIZES_BYTES) {
    for (const target of targets) {
      const result = results.get(`${target.name}|${size}`)!;
      const ms = (recorder: LatencyRecorder, percentile: number): string => formatSignificant(recorder.percentileMs(percentile));
      rows.push([
        target.name,
        formatBytes(size),
        ms(result.putLatency, 50),
        ms(result.putLatency, 99),
        ms(result.getLatency, 50),
        ms(result.getLatency, 99),
        formatSignificant(median(result.putMbps)),
        formatSignificant(median(result.getMbps)),
        formatSignificant(median(result.putMbpsConcurrent)),
        formatSignificant(median(result.getMbpsConcurrent)),
      ]);
    }
  }
  const columns = ['backend', 'size', 'PUT p50 ms', 'PUT p99 ms', 'GET p50 ms', 'GET p99 ms', 'PUT MB/s', 'GET MB/s', `PUT MB/s @${THROUGHPUT_CONCURRENCY}`, `GET MB/s @${THROUGHPUT_CONCURRENCY}`];
  printTable(
    'Object store PUT/GET (latency over all rounds; MB/s median of rounds; one request at a time unless @N)',
    columns.map((title, index) => ({ title, align: index < 2 ? 'left' : 'right' })),
    rows,
  );
  reportRatios(results);
}

/** SDK time per request over the Bun variants' (>1: Bun is faster), median of per-round ratios with the range. */
function reportRatios(results: Map<string, CaseResult>): void {
  const rows: string[][] = [];
  for (const size of OBJECT_SIZES_BYTES) {
    const sdk = results.get(`s3: @aws-sdk/client-s3|${size}`)!;
    for (const bunName of ['s3: S3Store Bun path', 's3: Bun.S3Client']) {
      const bun = results.get(`${bunName}|${size}`)!;
      for (const [op, sdkMs, bunMs] of [
        ['PUT', sdk.putMeanMs, bun.putMeanMs],
        ['GET', sdk.getMeanMs, bun.getMeanMs],
      ] as const) {
        const ratios = pairedRatios(sdkMs, bunMs);
        rows.push([`SDK / ${bunName.slice(4)}`, formatBytes(size), op, formatSignificant(median(ratios)), `${formatSignificant(minOf(ratios))}-${formatSignificant(maxOf(ratios))}`]);
      }
    }
  }
  printTable(
    'S3 client cost: @aws-sdk/client-s3 mean time per request / the Bun variant (same s3rver, same rounds)',
    [{ title: 'ratio', align: 'left' }, { title: 'size', align: 'left' }, { title: 'op', align: 'left' }, { title: 'median' }, { title: 'range' }],
    rows,
  );
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const s3rver = await startS3rver();
  const fileRoot = makeTempDir('store');
  try {
    await s3rver.createBucket(BUCKET);
    const targets = await openTargets(s3rver, fileRoot);
    const results = await measure(targets, quick ? QUICK_ROUND_COUNT : ROUND_COUNT, quick ? QUICK_OPS_DIVISOR : 1);
    report(targets, results);
    await Promise.all(targets.map((target) => target.close()));
  } finally {
    await s3rver.stop();
    removeTempDir(fileRoot);
  }
}

await main();
