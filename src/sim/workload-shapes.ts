import type { SeededRandom } from '../util/random.ts';

/**
 * How each producer shapes its requests and batches (issue 25, item 2): Kafka's linger.ms, so
 * that batches of several partitions share a request; bursts of batches to several partitions at
 * one moment; a compression codec; and batches padded from a record or two up to near the topics'
 * max.message.bytes. Drawn from the run's own stream (run.ts salts it), so that the other draws
 * stay as they were. A producer drawn plain (no linger, no bursts, no codec, no padding) sends as
 * before: one small batch per request.
 */
export interface ProducerShape {
  /** Kafka's linger.ms: a new batch waits this long for others to share its request; 0: it goes at once. */
  readonly lingerMs: number;
  /** At most this many batches are produced at one moment, each to a drawn partition (1: one at a time). */
  readonly burstMax: number;
  /** The codec of its batches (Ferry's batch builder writes these; snappy and lz4 it cannot decode). */
  readonly compression: 'none' | 'gzip' | 'zstd';
  /** Batches are padded to a size drawn up to this (bytes); 0: not padded (a few short records). */
  readonly batchBytesMax: number;
}

export interface WorkloadShapes {
  readonly producers: readonly ProducerShape[];
  /** max.message.bytes every topic is created with; null: Kafka's default (1 MiB + 12), as before. */
  readonly maxMessageBytes: number | null;
}

const LINGERS_MS = [0, 0, 5, 20, 50];
/** Bursts of up to four batches: with linger, a request then carries up to as many partitions. */
const BURSTS_MAX = [1, 1, 2, 4];
const CODECS: readonly ProducerShape['compression'][] = ['none', 'none', 'gzip', 'zstd'];
/** The share of producers that pad their batches. */
const PADDED_SHARE = 0.5;
/**
 * Topics' max.message.bytes in runs whose producers pad: far below the default, so that a batch
 * near the limit stays cheap to build, compress, replicate, tier and read back in a simulation.
 */
const MAX_MESSAGE_BYTES = [8 * 1024, 16 * 1024, 32 * 1024];
/**
 * Padded batches stay below this share of max.message.bytes: what a codec adds to incompressible
 * bytes (a few bytes per block, a header) and the records' own fields fit in the rest.
 */
const NEAR_LIMIT_SHARE = 0.9;

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

export function drawWorkloadShapes(random: SeededRandom, producers: number): WorkloadShapes {
  const maxMessageBytes = pick(random, MAX_MESSAGE_BYTES);
  const shapes = Array.from({ length: producers }, (): ProducerShape => {
    const lingerMs = pick(random, LINGERS_MS);
    const burstMax = pick(random, BURSTS_MAX);
    const compression = pick(random, CODECS);
    const batchBytesMax = random.next() < PADDED_SHARE ? Math.floor(maxMessageBytes * NEAR_LIMIT_SHARE) : 0;
    return { lingerMs, burstMax, compression, batchBytesMax };
  });
  const padded = shapes.some((shape) => shape.batchBytesMax > 0);
  return { producers: shapes, maxMessageBytes: padded ? maxMessageBytes : null };
}

/** A padded batch's size: log-uniform in [1, batchBytesMax], so most are small and a few come near the limit. */
export function drawBatchBytes(random: SeededRandom, shape: ProducerShape): number {
  if (shape.batchBytesMax <= 0) return 0;
  return Math.floor(Math.exp(random.next() * Math.log(shape.batchBytesMax)));
}

export function describeShapes(shapes: WorkloadShapes): string {
  const producers = shapes.producers
    .map((shape, i) => {
      const parts = [
        shape.lingerMs > 0 ? `linger ${shape.lingerMs} ms` : '',
        shape.burstMax > 1 ? `bursts of ${shape.burstMax}` : '',
        shape.compression === 'none' ? '' : shape.compression,
        shape.batchBytesMax > 0 ? `batches up to ${shape.batchBytesMax} B` : '',
      ].filter((part) => part !== '');
      return parts.length === 0 ? '' : `p${i} ${parts.join(', ')}`;
    })
    .filter((text) => text !== '');
  const limit = shapes.maxMessageBytes === null ? '' : `max.message.bytes ${shapes.maxMessageBytes}`;
  const all = [...producers, limit].filter((text) => text !== '');
  return all.length === 0 ? '' : `; shapes: ${all.join('; ')}`;
}
