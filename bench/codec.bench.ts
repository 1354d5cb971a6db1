/**
 * The schema-driven codec (src/protocol/message-codec.ts) against the hand-written codecs
 * it replaced (bench/lib/handwritten-codecs.ts, Ferry's own at af710f1), on the two messages of
 * the hot path, Produce request decode (every produce) and Fetch response encode (every consume),
 * and on a large Metadata response (not hot, for scale).
 *
 * A decode is `new KafkaReader(frame)` + `decodeRequest`; an encode is `new KafkaWriter()` +
 * `encodeResponse` + `chunks()`, what the broker does per message. Records are opaque to both
 * codecs: real v2 batches, as views (the decoded records must be views of the frame, and each
 * fetched batch must go out as its own chunk; checked before timing, with the bytes of both codecs
 * at the same version compared).
 *
 * Each round times every case once with mitata's `measure` (cases in reverse order on odd rounds,
 * so drift hits both codecs); a case's ns/op is the median over rounds of mitata's p50, and the
 * ratio is the median of the per-round ratios schema / hand-written, with its min-max range.
 * Hand-written codecs exist only up to Produce v8, Fetch v11 and Metadata v8: later (flexible)
 * versions are compared to that newest hand-written version, which the baseline column names.
 */
import { measure } from 'mitata';
import { fetchCodec } from '../src/broker/apis/fetch.ts';
import { metadataCodec } from '../src/broker/apis/metadata.ts';
import { produceCodec } from '../src/broker/apis/produce.ts';
import type { ApiCodec } from '../src/broker/apis/api.ts';
import { encodeMessage } from '../src/protocol/message-codec.ts';
import { produceRequestSchema, type ProduceRequest } from '../src/protocol/messages/produce.ts';
import { KafkaReader } from '../src/protocol/reader.ts';
import { KafkaWriter } from '../src/protocol/writer.ts';
import { uuidFromBytes, UUID_BYTES } from '../src/util/uuid.ts';
import { parseBenchArgs } from './lib/args.ts';
import { buildFullBatch } from './lib/batches.ts';
import { handwrittenFetchCodec, handwrittenMetadataCodec, handwrittenProduceCodec } from './lib/handwritten-codecs.ts';
import { SeededRandom } from './lib/random.ts';
import { median, maxOf, minOf, pairedRatios } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { formatSignificant, KIB_BYTES } from './lib/units.ts';

const USAGE = `
bun bench/codec.bench.ts [--quick]

Times Produce request decode, Fetch response encode and Metadata response encode, the schema
codec at several versions beside Ferry's hand-written codecs of af710f1 (~35 s; --quick: 3 short
rounds, ~5 s), and prints ns/op (median of mitata p50s) and the ratio schema / hand-written.`;

const ROUND_COUNT = 9;
const QUICK_ROUND_COUNT = 3;
/** mitata's time per case per round: enough samples for a stable p50 of a microsecond operation. */
const CPU_NS_PER_CASE = 150_000_000;
const QUICK_CPU_NS_PER_CASE = 40_000_000;

/** The newest versions the hand-written codecs had (af710f1); the schema codec's are compared to these. */
const PRODUCE_HANDWRITTEN_VERSION = 8;
const FETCH_HANDWRITTEN_VERSION = 11;
const METADATA_HANDWRITTEN_VERSION = 8;
/** Produce v9 and Fetch v12 are the first flexible versions; v12 and v17 the newest Ferry serves. */
const PRODUCE_SCHEMA_VERSIONS = [8, 9, 12] as const;
const FETCH_SCHEMA_VERSIONS = [11, 12, 17] as const;
const METADATA_SCHEMA_VERSIONS = [8, 9, 11] as const;

/** Kafka's producer batch.size (16 KiB) of 1 KiB records, and a 1 KiB batch of 100 B records. */
const LARGE_BATCH = buildFullBatch(KIB_BYTES).bytes;
const SMALL_BATCH = buildFullBatch(100, KIB_BYTES).bytes;
const ACKS_ALL = -1;
const PRODUCE_TIMEOUT_MS = 30_000;
const METADATA_BROKER_COUNT = 3;
const BROKER_PORT = 9092;
/** Kafka's "not requested" for authorized operations. */
const AUTHORIZED_OPERATIONS_NOT_REQUESTED = -2147483648;
const SEED = 0xc0dec;

type Codec = ApiCodec<unknown, unknown>;

interface Case {
  readonly group: string;
  readonly codec: 'hand-written' | 'schema';
  readonly version: number;
  readonly run: () => unknown;
}

interface Shape {
  readonly topics: number;
  readonly partitions: number;
  /** Batches per partition (Fetch) or the one batch's bytes (Produce). */
  readonly batches: number;
  readonly batch: Uint8Array;
}

function topicName(index: number): string {
  return `bench-topic-${index}`;
}

function topicId(random: SeededRandom): string {
  return uuidFromBytes(random.fill(new Uint8Array(UUID_BYTES)));
}

function concat(chunks: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(chunks);
}

function assertBench(condition: boolean, message: string): asserts condition {
  if (!condition) throw new Error(`codec bench: ${message}`);
}

// ---- Produce request decode ----

function produceRequest(shape: Shape): ProduceRequest {
  const topicData = Array.from({ length: shape.topics }, (_, t) => ({
    name: topicName(t),
    partitionData: Array.from({ length: shape.partitions }, (_, index) => ({ index, records: shape.batch })),
  }));
  return { transactionalId: null, acks: ACKS_ALL, timeoutMs: PRODUCE_TIMEOUT_MS, topicData };
}

function produceFrame(request: ProduceRequest, version: number): Uint8Array {
  const writer = new KafkaWriter();
  encodeMessage(produceRequestSchema, writer, version, request as unknown as Record<string, unknown>);
  return concat(writer.chunks());
}

function decodeCase(group: string, codec: Case['codec'], api: Codec, version: number, frame: Uint8Array): Case {
  return { group, codec, version, run: () => api.decodeRequest(new KafkaReader(frame), version) };
}

/** Both codecs read the same request, and the records come out as views of the frame. */
function checkProduceDecode(frame: Uint8Array, version: number): void {
  const schema = produceCodec.decodeRequest(new KafkaReader(frame), version);
  const handwritten = handwrittenProduceCodec.decodeRequest(new KafkaReader(frame), version);
  assertBench(Bun.deepEquals(schema, handwritten), `Produce v${version}: the codecs decode differently`);
  for (const topic of schema.topicData) {
    for (const partition of topic.partitionData) assertBench(partition.records?.buffer === frame.buffer, 'records copied out of the frame');
  }
}

function produceCases(label: string, shape: Shape): Case[] {
  const group = `Produce decode ${label}`;
  const request = produceRequest(shape);
  const baselineFrame = produceFrame(request, PRODUCE_HANDWRITTEN_VERSION);
  checkProduceDecode(baselineFrame, PRODUCE_HANDWRITTEN_VERSION);
  return [
    decodeCase(group, 'hand-written', handwrittenProduceCodec as Codec, PRODUCE_HANDWRITTEN_VERSION, baselineFrame),
    ...PRODUCE_SCHEMA_VERSIONS.map((version) => decodeCase(group, 'schema', produceCodec as Codec, version, produceFrame(request, version))),
  ];
}

// ---- Fetch response encode ----

/** As the broker's fetch handler answers: every field set, the topic named both ways (the version writes the one it has). */
function fetchResponse(shape: Shape, random: SeededRandom) {
  const records = Array.from({ length: shape.batches }, () => shape.batch);
  const responses = Array.from({ length: shape.topics }, (_, t) => ({
    topic: topicName(t),
    topicId: topicId(random),
    partitions: Array.from({ length: shape.partitions }, (_, partitionIndex) => ({
      partitionIndex,
      errorCode: 0,
      highWatermark: 1_000_000 + partitionIndex,
      lastStableOffset: 1_000_000 + partitionIndex,
      logStartOffset: 0,
      abortedTransactions: null,
      preferredReadReplica: -1,
      records,
    })),
  }));
  return { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses };
}

function encodeCase(group: string, codec: Case['codec'], api: Codec, version: number, response: unknown): Case {
  return {
    group,
    codec,
    version,
    run: () => {
      const writer = new KafkaWriter();
      api.encodeResponse(writer, version, response);
      return writer.chunks();
    },
  };
}

function encoded(api: Codec, version: number, response: unknown): Uint8Array[] {
  const writer = new KafkaWriter();
  api.encodeResponse(writer, version, response);
  return writer.chunks();
}

/** Same bytes from both codecs at the same version; every batch its own chunk (not copied). */
function checkSameEncoding(name: string, schema: Codec, handwritten: Codec, version: number, response: unknown, viewsMin: number): void {
  const schemaChunks = encoded(schema, version, response);
  const handwrittenChunks = encoded(handwritten, version, response);
  assertBench(Buffer.compare(concat(schemaChunks), concat(handwrittenChunks)) === 0, `${name} v${version}: the codecs encode differently`);
  assertBench(schemaChunks.length >= viewsMin, `${name} v${version}: ${schemaChunks.length} chunks for ${viewsMin} batches`);
}

function fetchCases(label: string, shape: Shape, random: SeededRandom): Case[] {
  const group = `Fetch encode ${label}`;
  const response = fetchResponse(shape, random);
  const batchCount = shape.topics * shape.partitions * shape.batches;
  checkSameEncoding('Fetch', fetchCodec as Codec, handwrittenFetchCodec as Codec, FETCH_HANDWRITTEN_VERSION, response, batchCount);
  return [
    encodeCase(group, 'hand-written', handwrittenFetchCodec as Codec, FETCH_HANDWRITTEN_VERSION, response),
    ...FETCH_SCHEMA_VERSIONS.map((version) => encodeCase(group, 'schema', fetchCodec as Codec, version, response)),
  ];
}

// ---- Metadata response encode ----

function metadataResponse(topicCount: number, partitionCount: number, random: SeededRandom) {
  const brokerIds = Array.from({ length: METADATA_BROKER_COUNT }, (_, id) => id);
  const brokers = brokerIds.map((nodeId) => ({ nodeId, host: `broker-${nodeId}.bench.internal`, port: BROKER_PORT, rack: null }));
  const topics = Array.from({ length: topicCount }, (_, t) => ({
    errorCode: 0,
    name: topicName(t),
    topicId: topicId(random),
    isInternal: false,
    partitions: Array.from({ length: partitionCount }, (_, partitionIndex) => ({
      errorCode: 0,
      partitionIndex,
      leaderId: partitionIndex % METADATA_BROKER_COUNT,
      leaderEpoch: 0,
      replicaNodes: brokerIds,
      isrNodes: brokerIds,
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: AUTHORIZED_OPERATIONS_NOT_REQUESTED,
  }));
  return { throttleTimeMs: 0, brokers, clusterId: 'bench-cluster', controllerId: 0, topics, clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_NOT_REQUESTED };
}

function metadataCases(topicCount: number, partitionCount: number, random: SeededRandom): Case[] {
  const group = `Metadata encode ${topicCount} topics x ${partitionCount} partitions`;
  const response = metadataResponse(topicCount, partitionCount, random);
  checkSameEncoding('Metadata', metadataCodec as Codec, handwrittenMetadataCodec as Codec, METADATA_HANDWRITTEN_VERSION, response, 1);
  return [
    encodeCase(group, 'hand-written', handwrittenMetadataCodec as Codec, METADATA_HANDWRITTEN_VERSION, response),
    ...METADATA_SCHEMA_VERSIONS.map((version) => encodeCase(group, 'schema', metadataCodec as Codec, version, response)),
  ];
}

function allCases(): Case[] {
  const random = new SeededRandom(SEED);
  return [
    ...produceCases('1 topic x 4 partitions x 16 KiB', { topics: 1, partitions: 4, batches: 1, batch: LARGE_BATCH }),
    ...produceCases('8 topics x 8 partitions x 1 KiB', { topics: 8, partitions: 8, batches: 1, batch: SMALL_BATCH }),
    ...fetchCases('4 partitions x 10 batches of 16 KiB', { topics: 1, partitions: 4, batches: 10, batch: LARGE_BATCH }, random),
    ...fetchCases('64 partitions x 1 batch of 16 KiB', { topics: 1, partitions: 64, batches: 1, batch: LARGE_BATCH }, random),
    ...metadataCases(100, 8, random),
  ];
}

// ---- timing and the table ----

/**
 * mitata batches calls into one sample only when a warm-up call happens to be fast, which for
 * operations of 1-300 us flips between cases and rounds. Each case instead gets a fixed sample
 * size from a first estimate: about SAMPLE_NS_TARGET of calls per sample, unbatched when one
 * call already takes that long (timer overhead is then under 1%).
 */
const SAMPLE_NS_TARGET = 20_000;
const ESTIMATE_MS = 20;
/** mitata unrolls a batch by 4: a batch is a multiple of it. */
const BATCH_UNROLL = 4;

function callsPerSample(run: () => unknown): number {
  const started = performance.now();
  let calls = 0;
  while (performance.now() - started < ESTIMATE_MS) {
    run();
    calls++;
  }
  const nsPerCall = ((performance.now() - started) * 1e6) / calls;
  return Math.max(1, Math.round(SAMPLE_NS_TARGET / nsPerCall / BATCH_UNROLL)) * BATCH_UNROLL;
}

/** Per case, mitata's p50 in each round, in ns. */
async function timeRounds(cases: readonly Case[], rounds: number, cpuNsPerCase: number): Promise<Map<Case, number[]>> {
  const batchSizes = new Map(cases.map((entry) => [entry, callsPerSample(entry.run)]));
  const p50s = new Map<Case, number[]>(cases.map((entry) => [entry, []]));
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? cases : [...cases].reverse();
    for (const entry of order) {
      const batch = batchSizes.get(entry)!;
      const batching = batch > BATCH_UNROLL ? { batch_samples: batch, batch_threshold: Infinity } : { batch_threshold: -1 };
      const stats = await measure(entry.run, { min_cpu_time: cpuNsPerCase, ...batching });
      p50s.get(entry)!.push(stats.p50);
    }
  }
  return p50s;
}

function printResults(cases: readonly Case[], p50s: Map<Case, number[]>, rounds: number): void {
  const baselineOf = (entry: Case): Case => cases.find((other) => other.group === entry.group && other.codec === 'hand-written')!;
  const rows = cases.map((entry) => {
    const own = p50s.get(entry)!;
    const cells = [entry.group, entry.codec, `v${entry.version}`, formatSignificant(median(own))];
    if (entry.codec === 'hand-written') return [...cells, '', '', ''];
    const baseline = baselineOf(entry);
    const ratios = pairedRatios(own, p50s.get(baseline)!);
    const against = baseline.version === entry.version ? `v${baseline.version} (same)` : `v${baseline.version}`;
    return [...cells, `${median(ratios).toFixed(2)}x`, `${minOf(ratios).toFixed(2)}-${maxOf(ratios).toFixed(2)}`, against];
  });
  printTable(
    `Codec cost, ns/op (median over ${rounds} rounds of mitata p50); ratio schema / hand-written (median of per-round ratios)`,
    [
      { title: 'message', align: 'left' },
      { title: 'codec', align: 'left' },
      { title: 'version', align: 'left' },
      { title: 'ns/op p50' },
      { title: 'schema/hw' },
      { title: 'range' },
      { title: 'hw baseline', align: 'left' },
    ],
    rows,
  );
}

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
const rounds = quick ? QUICK_ROUND_COUNT : ROUND_COUNT;
const cases = allCases();
const p50s = await timeRounds(cases, rounds, quick ? QUICK_CPU_NS_PER_CASE : CPU_NS_PER_CASE);
printResults(cases, p50s, rounds);
