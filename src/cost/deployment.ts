/**
 * What a month's bill is computed for: a steady produce rate kept for a retention, over a number
 * of partitions, replicas and availability zones, with Ferry's own knobs beside it. Every field
 * is checked against a named range so a typo cannot produce a plausible-looking bill.
 */
import { DEFAULT_LOG_CONFIG } from '../log/config.ts';
import { DEFAULT_WAL_READER_CONFIG } from '../wal/reader.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../wal/writer.ts';
import { TIER_INTERVAL_MS } from '../tier/tierer.ts';
import { STREAMING_PART_BYTES_DEFAULT } from '../store/streaming-upload.ts';

export interface Deployment {
  /** Records produced, all partitions together, MB (10^6 B) per second, steady all month. */
  readonly throughputMbPerSecond: number;
  /** How long every byte is kept (Kafka retention.ms). */
  readonly retentionHours: number;
  readonly partitions: number;
  /** Copies of each partition: Kafka's replication.factor; Ferry's leader plus followers. */
  readonly replication: number;
  /** Availability zones the brokers, producers and consumers are spread over evenly. */
  readonly zones: number;
  /** Consumer groups reading every byte once (1: one group reads everything). */
  readonly readFanout: number;
  /** Brokers; each leads an even share of the partitions and so writes its own WAL stream. */
  readonly brokers: number;
  /** Bytes per produce a leader receives (a producer's batch): how often a writer sees data. */
  readonly produceBytes: number;
  readonly ferry: FerryKnobs;
}

export interface FerryKnobs {
  /** WAL upload triggers (DEFAULT_WAL_WRITER_CONFIG): an object closes at this size... */
  readonly uploadBytes: number;
  /** ...or this long after its first frame, whichever comes first. */
  readonly uploadIntervalMs: number;
  /** ...or at once when the writer is idle, and when the upload before it lands (docs/wal-protocol.md [W8]). */
  readonly uploadWhenIdle: boolean;
  /** Kafka segment.bytes and segment.ms: a segment is tiered once rolled. */
  readonly segmentBytes: number;
  readonly segmentHours: number;
  /** KIP-405 local.retention on each replica's disk (gp3), after the tier holds the bytes. */
  readonly localRetentionHours: number;
  /** Tier uploads are multipart in parts of this size. */
  readonly tierPartBytes: number;
  /** The tierer's round, which a rolled segment may wait for before upload. */
  readonly tierIntervalMs: number;
  /** A follower reads this many bytes from a WAL object's end first; a smaller object comes whole. */
  readonly tailProbeBytes: number;
}

/** Kafka producers' default batch.size (16 KiB). */
export const PRODUCE_BYTES_DEFAULT = 16 * 1024;

/** Ferry's defaults, read from the code that runs, so the bill follows the code. */
export const DEFAULT_FERRY_KNOBS: FerryKnobs = {
  uploadBytes: DEFAULT_WAL_WRITER_CONFIG.uploadBytes,
  uploadIntervalMs: DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs,
  uploadWhenIdle: DEFAULT_WAL_WRITER_CONFIG.uploadWhenIdle,
  segmentBytes: DEFAULT_LOG_CONFIG.segmentBytes,
  segmentHours: DEFAULT_LOG_CONFIG.segmentMs / 3_600_000,
  // Ferry's log default keeps everything local (-2, as KIP-405's); a cost-minded deployment sets
  // local.retention.ms short, since consumers of older offsets are served from the tier.
  localRetentionHours: 1,
  tierPartBytes: STREAMING_PART_BYTES_DEFAULT,
  tierIntervalMs: TIER_INTERVAL_MS,
  tailProbeBytes: DEFAULT_WAL_READER_CONFIG.tailProbeBytes,
};

/** Without flags: 3 zones, RF 3, one broker per zone, 7 days (Kafka's retention default). */
export const DEFAULT_DEPLOYMENT: Deployment = {
  throughputMbPerSecond: 100,
  retentionHours: 7 * 24,
  partitions: 64,
  replication: 3,
  zones: 3,
  readFanout: 1,
  brokers: 3,
  produceBytes: PRODUCE_BYTES_DEFAULT,
  ferry: DEFAULT_FERRY_KNOBS,
};

/** Kafka's default message.max.bytes is ~1 MiB; 1 GiB is far past any produce. */
export const PRODUCE_BYTES_MAX = 1024 ** 3;

/** 100 GB/s: well past any single cluster; above it a number is a typo. */
export const THROUGHPUT_MB_PER_SECOND_MAX = 100_000;
/** Ten years. */
export const RETENTION_HOURS_MAX = 10 * 365 * 24;
/** Kafka clusters run to a few hundred thousand partitions (KIP-500's target: millions). */
export const PARTITIONS_MAX = 10_000_000;
/** Kafka refuses replication factors above the broker count; 16 is far past any real topic. */
export const REPLICATION_MAX = 16;
/** AWS's largest regions have 6 availability zones. */
export const ZONES_MAX = 6;
export const READ_FANOUT_MAX = 1000;
export const BROKERS_MAX = 100_000;

/** A deployment the model refuses; `field` names the Deployment field at fault. */
export class DeploymentError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field} ${message}`);
    this.field = field;
  }
}

type Range = readonly [min: number, max: number, integer: boolean];

const RANGES: Readonly<Record<Exclude<keyof Deployment, 'ferry'>, Range>> = {
  throughputMbPerSecond: [0, THROUGHPUT_MB_PER_SECOND_MAX, false],
  retentionHours: [0, RETENTION_HOURS_MAX, false],
  partitions: [1, PARTITIONS_MAX, true],
  replication: [1, REPLICATION_MAX, true],
  zones: [1, ZONES_MAX, true],
  readFanout: [0, READ_FANOUT_MAX, false],
  brokers: [1, BROKERS_MAX, true],
  produceBytes: [1, PRODUCE_BYTES_MAX, false],
};

/** Throws DeploymentError naming the first field out of range or inconsistent with another. */
export function checkDeployment(deployment: Deployment): Deployment {
  for (const [name, [min, max, integer]] of Object.entries(RANGES) as [keyof typeof RANGES, Range][]) {
    const value = deployment[name];
    if (!Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      throw new DeploymentError(name, `must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${value}`);
    }
  }
  if (deployment.replication > deployment.brokers) throw new DeploymentError('replication', `${deployment.replication} needs at least as many brokers, got ${deployment.brokers}`);
  const ferry = deployment.ferry;
  for (const [name, value] of Object.entries(ferry)) {
    if (typeof value === 'boolean') continue;
    if (!Number.isFinite(value) || value < 0) throw new DeploymentError(`ferry.${name}`, `must be a number >= 0, got ${value}`);
  }
  if (ferry.uploadBytes <= 0 || ferry.segmentBytes <= 0 || ferry.tierPartBytes <= 0) throw new DeploymentError('ferry.uploadBytes', 'and the segment and part sizes must be positive');
  if (ferry.uploadIntervalMs <= 0 || ferry.segmentHours <= 0) throw new DeploymentError('ferry.uploadIntervalMs', 'and ferry.segmentHours must be positive');
  return deployment;
}
