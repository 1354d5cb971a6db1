/**
 * A month's bill for one deployment, line by line: Ferry (WAL on S3 Express One Zone, history in
 * S3 Standard, a short local retention on gp3) beside classic Kafka (every replica on gp3, replicas
 * across zones). docs/cost-model.md states every assumption; the arithmetic here follows it line by
 * line. Quantities are per 30-day month; GB = 2^30 bytes.
 */
import { LatencyModel, S3_EXPRESS_LATENCY } from '../store/latency.ts';
import { SeededRandom } from '../util/random.ts';
import type { Deployment, FerryKnobs } from './deployment.ts';
import { BYTES_PER_GB, BYTES_PER_MB, CROSS_AZ_USD_PER_GB_EACH_WAY, GP3_USD_PER_GB_MONTH, S3_EXPRESS_ONE_ZONE_PRICES as S3E, S3_STANDARD_PRICES as S3STD, SECONDS_PER_MONTH } from './prices.ts';

/**
 * Disks are provisioned so that the retained bytes fill at most this fraction of them: room for a
 * partition reassignment, a lagging retention check and a failed broker's share (an assumption,
 * docs/cost-model.md; Kafka operators commonly alert at 70-80% full).
 */
export const DISK_FILL_FRACTION_MAX = 0.7;
/** A tiered segment also writes one control record (its tier record, compare-and-swap): one PUT. */
export const TIER_RECORD_PUTS_PER_SEGMENT = 1;
/** A multipart upload adds its create and complete requests to its parts. */
const MULTIPART_EXTRA_PUTS = 2;
/** A follower reads a WAL object's tail (footer) first, then its frames in one ranged GET. */
const FOLLOWER_GETS_LARGE_OBJECT = 2;
const FOLLOWER_GETS_SMALL_OBJECT = 1;
/** Both sides of a cross-zone transfer pay the per-GB fee. */
const CROSS_ZONE_USD_PER_GB = CROSS_AZ_USD_PER_GB_EACH_WAY * 2;
const MS_PER_SECOND = 1000;
const SECONDS_PER_HOUR = 3600;

export interface BillLine {
  readonly item: string;
  /** What was counted, in words and numbers (e.g. "2,414 GB x 2 copies"). */
  readonly quantity: string;
  readonly usdPerMonth: number;
}

export interface Bill {
  readonly system: string;
  readonly lines: readonly BillLine[];
  readonly totalUsdPerMonth: number;
}

export interface Comparison {
  readonly deployment: Deployment;
  readonly ferry: Bill;
  readonly kafka: Bill;
  /** Kafka's total over Ferry's: how many times cheaper Ferry is (Infinity when Ferry's is 0). */
  readonly kafkaOverFerry: number;
}

/** What no line of either bill counts; printed with every bill. */
export const NOT_MODELLED: readonly string[] = [
  'compute (broker instances): both systems run brokers; it depends on the instance choice',
  'gp3 IOPS and throughput bought above the free baseline (3,000 IOPS, 125 MB/s per volume)',
  'reads of old offsets: Kafka serves them from disk, Ferry from S3 Standard (GETs at $0.0004/1k)',
  'control-store requests (leases, seals, offsets; bench/failover.bench.ts measures an idle cluster), WAL GC LISTs; DELETEs are free',
  'follower probes for WAL objects not written yet (404 GETs) and WAL framing bytes (under 1%)',
  'internet or cross-region egress, and Kafka tiered storage (KIP-405): the Kafka column keeps everything on disk',
];

const gbOf = (bytes: number): number => bytes / BYTES_PER_GB;
const round = (value: number): string => Math.round(value).toLocaleString('en-US');
const fixed = (value: number, digits: number): string => value.toLocaleString('en-US', { maximumFractionDigits: digits });

/** The share of produced bytes that crosses a zone on the way from producer to leader. */
export function producerCrossZoneShare(zones: number): number {
  return (zones - 1) / zones;
}

/**
 * The share of consumed bytes that crosses a zone: consumers fetch from a replica in their own
 * zone when there is one (KIP-392's client.rack, assumed configured), so only consumers in zones
 * without a replica cross.
 */
export function consumerCrossZoneShare(zones: number, replication: number): number {
  return (zones - Math.min(replication, zones)) / zones;
}

/** Follower replicas outside the leader's zone, replicas spread over zones first (rack-aware). */
export function crossZoneFollowers(zones: number, replication: number): number {
  return Math.min(replication - 1, zones - 1);
}

function clientLines(deployment: Deployment, monthGb: number): BillLine[] {
  const producerShare = producerCrossZoneShare(deployment.zones);
  const consumerShare = consumerCrossZoneShare(deployment.zones, deployment.replication);
  return [
    {
      item: 'cross-zone: producers -> leaders',
      quantity: `${round(monthGb)} GB x ${fixed(producerShare, 3)} of producers in another zone`,
      usdPerMonth: monthGb * producerShare * CROSS_ZONE_USD_PER_GB,
    },
    {
      item: 'cross-zone: replicas -> consumers',
      quantity: `${round(monthGb)} GB x ${fixed(deployment.readFanout, 2)} groups x ${fixed(consumerShare, 3)} in a zone without a replica`,
      usdPerMonth: monthGb * deployment.readFanout * consumerShare * CROSS_ZONE_USD_PER_GB,
    },
  ];
}

function disk(bytes: number, copies: number): { gb: number; usdPerMonth: number } {
  const gb = (gbOf(bytes) * copies) / DISK_FILL_FRACTION_MAX;
  return { gb, usdPerMonth: gb * GP3_USD_PER_GB_MONTH };
}

function totalOf(system: string, lines: BillLine[]): Bill {
  return { system, lines, totalUsdPerMonth: lines.reduce((sum, line) => sum + line.usdPerMonth, 0) };
}

/** Requests to upload one object of `bytes`: one PUT, or a multipart upload's parts, create and complete. */
export function putsPerObject(bytes: number, partBytes: number): number {
  return bytes > partBytes ? Math.ceil(bytes / partBytes) + MULTIPART_EXTRA_PUTS : 1;
}

/** Classic Kafka: every replica keeps the whole retention on gp3; followers fetch across zones. */
export function kafkaBill(deployment: Deployment): Bill {
  const bytesPerSecond = deployment.throughputMbPerSecond * BYTES_PER_MB;
  const monthGb = gbOf(bytesPerSecond * SECONDS_PER_MONTH);
  const retainedBytes = bytesPerSecond * deployment.retentionHours * SECONDS_PER_HOUR;
  const disks = disk(retainedBytes, deployment.replication);
  const followers = crossZoneFollowers(deployment.zones, deployment.replication);
  return totalOf(`classic Kafka, RF ${deployment.replication}`, [
    {
      item: 'EBS gp3: retention x replicas',
      quantity: `${round(gbOf(retainedBytes))} GB x ${deployment.replication} / ${DISK_FILL_FRACTION_MAX} fill = ${round(disks.gb)} GB-month`,
      usdPerMonth: disks.usdPerMonth,
    },
    { item: 'cross-zone: leader -> followers', quantity: `${round(monthGb)} GB x ${followers} copies in other zones`, usdPerMonth: monthGb * followers * CROSS_ZONE_USD_PER_GB },
    ...clientLines(deployment, monthGb),
  ]);
}

/** The WAL's shape at this rate: writers, objects per second, mean object size. */
export interface WalShape {
  readonly writers: number;
  readonly objectsPerSecond: number;
  readonly meanObjectBytes: number;
  /** Distinct follower brokers that read each WAL object. */
  readonly readersPerObject: number;
}

/**
 * Each broker leading partitions writes one WAL stream. An object closes at uploadBytes, or
 * uploadIntervalMs after its first frame; the next opens with the next produce. With produces
 * arriving at random (rate lambda per writer), a cycle lasts the interval plus the wait for the
 * next produce (1 / lambda on average), so a writer closes max(rate / uploadBytes,
 * 1 / cycle) objects a second. Under uploadWhenIdle the cycle is walCycleSeconds's instead.
 */
export function walShape(deployment: Deployment): WalShape {
  const bytesPerSecond = deployment.throughputMbPerSecond * BYTES_PER_MB;
  const writers = Math.min(deployment.brokers, deployment.partitions);
  if (bytesPerSecond === 0) return { writers, objectsPerSecond: 0, meanObjectBytes: 0, readersPerObject: 0 };
  const writerBytesPerSecond = bytesPerSecond / writers;
  const producesPerSecond = writerBytesPerSecond / deployment.produceBytes;
  const cycleSeconds = walCycle(deployment.ferry, producesPerSecond, writerBytesPerSecond);
  const perWriter = Math.max(writerBytesPerSecond / deployment.ferry.uploadBytes, 1 / cycleSeconds);
  const partitionsPerWriter = deployment.partitions / writers;
  const readersPerObject = Math.min(deployment.brokers - 1, Math.ceil((deployment.replication - 1) * partitionsPerWriter));
  return { writers, objectsPerSecond: perWriter * writers, meanObjectBytes: writerBytesPerSecond / perWriter, readersPerObject };
}

/** Rounds of the body size's fixed point (it settles to <0.1% within 5 at the defaults). */
const BODY_SIZE_ROUNDS = 20;
/** Draws of a PUT's first byte the cycle is averaged over (a fixed seed: the bill is the same every time). */
const PUT_LATENCY_DRAWS = 4096;
const PUT_LATENCY_SEED = 1176;

/**
 * The WAL's PUT first-byte times as the S3 Express latency model draws them (the bench's and the
 * simulation's model): the cycle is averaged over them, since it is not linear in the busy time
 * (an average busy time would overstate it, the median understate it).
 */
const putFirstByteDrawsMs: readonly number[] = (() => {
  const model = new LatencyModel(S3_EXPRESS_LATENCY, new SeededRandom(PUT_LATENCY_SEED));
  return Array.from({ length: PUT_LATENCY_DRAWS }, () => model.firstByteMs('put'));
})();

/**
 * walCycleSeconds with the writer busy for a whole PUT, as it is: a drawn first byte plus the
 * body's transfer at the model's bandwidth, the body being what arrives in one cycle (at most the
 * object size). The body depends on the cycle and the cycle on the busy time: a fixed point.
 */
function walCycle(ferry: FerryKnobs, producesPerSecond: number, writerBytesPerSecond: number): number {
  if (!ferry.uploadWhenIdle) return walCycleSeconds(ferry, producesPerSecond, 0);
  let cycleSeconds = ferry.uploadIntervalMs / MS_PER_SECOND;
  for (let round = 0; round < BODY_SIZE_ROUNDS; round++) {
    const transferMs = Math.min(ferry.uploadBytes, writerBytesPerSecond * cycleSeconds) / S3_EXPRESS_LATENCY.bytesPerMs;
    let total = 0;
    for (const firstByteMs of putFirstByteDrawsMs) total += walCycleSeconds(ferry, producesPerSecond, firstByteMs + transferMs);
    cycleSeconds = total / putFirstByteDrawsMs.length;
  }
  return cycleSeconds;
}

/**
 * Mean seconds between two interval- or idle-closed objects of one writer, produces arriving at
 * random at `producesPerSecond`. Without uploadWhenIdle: the interval plus the wait for the next
 * produce. With it ([W8]): the last object closed at 0 and its upload keeps the writer busy until
 * L (`busyMs`); the next produce comes at a ~ Exp(lambda). If a >= L the writer is idle and the
 * object closes at a; otherwise at min(a + interval, L). So the cycle is
 * E[a >= L ? a : min(a + I, L)], taken in closed form.
 */
export function walCycleSeconds(ferry: FerryKnobs, producesPerSecond: number, busyMs: number): number {
  const lambda = producesPerSecond;
  const interval = ferry.uploadIntervalMs / MS_PER_SECOND;
  if (!ferry.uploadWhenIdle) return interval + 1 / lambda;
  const busy = busyMs / MS_PER_SECOND;
  const afterBusy = Math.exp(-lambda * busy) * (busy + 1 / lambda); // a >= L: closes at a
  if (interval >= busy) return busy * (1 - Math.exp(-lambda * busy)) + afterBusy; // a < L: closes when the upload lands
  const early = busy - interval; // a < L - I: the interval closes it at a + I; L - I <= a < L: the landing, at L
  const byInterval = interval - busy * Math.exp(-lambda * early) + (1 - Math.exp(-lambda * early)) / lambda;
  const byLanding = busy * (Math.exp(-lambda * early) - Math.exp(-lambda * busy));
  return byInterval + byLanding + afterBusy;
}

/**
 * Bytes followers GET per month: each reader of an object reads its tail probe (the whole object
 * when smaller), and the followers of each partition read its frames past the probe once each
 * (neighbouring frames merged, docs/cost-model.md).
 */
function followerReadBytesPerMonth(deployment: Deployment, wal: WalShape): number {
  if (wal.objectsPerSecond === 0) return 0;
  const probe = Math.min(wal.meanObjectBytes, deployment.ferry.tailProbeBytes);
  const rest = wal.meanObjectBytes - probe;
  return wal.objectsPerSecond * SECONDS_PER_MONTH * (wal.readersPerObject * probe + (deployment.replication - 1) * rest);
}

/** Bytes of one partition's segment when it rolls: full, or what segment.ms let it gather. */
function segmentRollBytes(deployment: Deployment, bytesPerSecond: number): number {
  const perPartition = bytesPerSecond / deployment.partitions;
  return Math.min(deployment.ferry.segmentBytes, perPartition * deployment.ferry.segmentHours * SECONDS_PER_HOUR);
}

/** Ferry: the WAL on S3 Express One Zone, history in S3 Standard, a short local retention per replica. */
export function ferryBill(deployment: Deployment): Bill {
  const knobs = deployment.ferry;
  const bytesPerSecond = deployment.throughputMbPerSecond * BYTES_PER_MB;
  const monthGb = gbOf(bytesPerSecond * SECONDS_PER_MONTH);
  const retainedBytes = bytesPerSecond * deployment.retentionHours * SECONDS_PER_HOUR;
  const wal = walShape(deployment);
  const walPuts = wal.objectsPerSecond * putsPerObject(wal.meanObjectBytes, knobs.tierPartBytes) * SECONDS_PER_MONTH;
  const getsPerRead = wal.meanObjectBytes > knobs.tailProbeBytes ? FOLLOWER_GETS_LARGE_OBJECT : FOLLOWER_GETS_SMALL_OBJECT;
  const walGets = wal.objectsPerSecond * wal.readersPerObject * getsPerRead * SECONDS_PER_MONTH;
  const readGb = gbOf(followerReadBytesPerMonth(deployment, wal));
  const segmentBytes = segmentRollBytes(deployment, bytesPerSecond);
  // docs/cost-model.md, "WAL bytes held": per partition its active segment and one rolled segment
  // waiting for the tierer, plus what arrives while the tierer waits for its round; never more
  // than retention keeps (GC also deletes below the log start).
  const walHeldBytes = Math.min(deployment.partitions * 2 * segmentBytes + (bytesPerSecond * knobs.tierIntervalMs) / MS_PER_SECOND, retainedBytes);
  const segmentsPerMonth = segmentBytes === 0 ? 0 : (bytesPerSecond * SECONDS_PER_MONTH) / segmentBytes;
  const tierPuts = segmentsPerMonth * (putsPerObject(segmentBytes, knobs.tierPartBytes) + TIER_RECORD_PUTS_PER_SEGMENT);
  const localBytes = Math.min(retainedBytes, bytesPerSecond * knobs.localRetentionHours * SECONDS_PER_HOUR) + deployment.partitions * segmentBytes;
  const disks = disk(localBytes, deployment.replication);
  return totalOf(`Ferry, ${deployment.replication} replica${deployment.replication === 1 ? '' : 's'}`, [
    {
      item: 'S3 Express: WAL PUTs',
      quantity: `${fixed(wal.objectsPerSecond, 1)} objects/s (${wal.writers} writers, mean ${fixed(wal.meanObjectBytes / 1024, 1)} KiB) = ${round(walPuts)} PUTs`,
      usdPerMonth: (walPuts * S3E.putClassUsdPer1000) / 1000,
    },
    { item: 'S3 Express: upload fee', quantity: `${round(monthGb)} GB`, usdPerMonth: monthGb * S3E.uploadUsdPerGb },
    {
      item: 'S3 Express: follower GETs',
      quantity: `${wal.readersPerObject} follower brokers x ${getsPerRead} GETs per object = ${round(walGets)} GETs`,
      usdPerMonth: (walGets * S3E.getClassUsdPer1000) / 1000,
    },
    { item: 'S3 Express: follower retrieval', quantity: `${round(readGb)} GB read by ${deployment.replication - 1} followers per partition`, usdPerMonth: readGb * S3E.retrievalUsdPerGb },
    { item: 'S3 Express: WAL storage', quantity: `${fixed(gbOf(walHeldBytes), 1)} GB held until tiered`, usdPerMonth: gbOf(walHeldBytes) * S3E.storageUsdPerGbMonth },
    {
      item: 'S3 Standard: tier PUTs',
      quantity: `${round(segmentsPerMonth)} segments of ${fixed(segmentBytes / 2 ** 20, 1)} MiB = ${round(tierPuts)} PUTs`,
      usdPerMonth: (tierPuts * S3STD.putClassUsdPer1000) / 1000,
    },
    { item: 'S3 Standard: storage', quantity: `${round(gbOf(retainedBytes))} GB, one copy`, usdPerMonth: gbOf(retainedBytes) * S3STD.storageUsdPerGbMonth },
    {
      item: 'EBS gp3: local retention',
      quantity: `${fixed(gbOf(localBytes), 1)} GB x ${deployment.replication} / ${DISK_FILL_FRACTION_MAX} fill = ${round(disks.gb)} GB-month`,
      usdPerMonth: disks.usdPerMonth,
    },
    { item: 'cross-zone: leader -> followers', quantity: 'none: followers read the WAL from S3 (no cross-zone fee within a region)', usdPerMonth: 0 },
    ...clientLines(deployment, monthGb),
  ]);
}

export function compare(deployment: Deployment): Comparison {
  const ferry = ferryBill(deployment);
  const kafka = kafkaBill(deployment);
  return { deployment, ferry, kafka, kafkaOverFerry: ferry.totalUsdPerMonth === 0 ? Infinity : kafka.totalUsdPerMonth / ferry.totalUsdPerMonth };
}
