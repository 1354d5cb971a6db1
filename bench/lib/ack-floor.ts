/**
 * The floor under a broker's acks=all latency (issue 27 item 3): the client's linger, the WAL's
 * upload interval (an object closes that long after its first append), and one PUT of the object,
 * drawn from the same store the broker writes its WAL to, in the same run: real FileStore puts
 * (fsync on, in this machine's temporary directory) for the file store, and the memory store's
 * latency model for the s3-express target. No broker acknowledges an acks=all produce sooner.
 */
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import { LatencyModel, S3_EXPRESS_LATENCY } from '../../src/store/latency.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { LatencyRecorder } from './latency.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';

/** PUTs drawn per round and target: enough for a stable p99 over a few rounds. */
export const FLOOR_PUTS_PER_ROUND = 400;
const FLOOR_SEED = 0xf100;

/** Where a target's WAL goes, for the floor's PUTs. */
export type FloorStore = 'file' | 's3-express';

export interface FloorShape {
  /** The client's linger.ms. */
  readonly lingerMs: number;
  /** The broker's WAL upload interval (ferry broker's default). */
  readonly uploadIntervalMs: number;
  /** The WAL object's size: the bytes one request carries at the probe's rate. */
  readonly objectBytes: number;
}

/** FLOOR_PUTS_PER_ROUND PUT latencies of `objectBytes` from `store`, in ms. */
export async function putLatenciesMs(store: FloorStore, objectBytes: number, round: number): Promise<number[]> {
  if (store === 's3-express') {
    const model = new LatencyModel(S3_EXPRESS_LATENCY, new SeededRandom(FLOOR_SEED + round));
    return Array.from({ length: FLOOR_PUTS_PER_ROUND }, () => model.requestMs('put', objectBytes));
  }
  const directory = makeTempDir('ack-floor');
  try {
    const files = await FileStore.open(join(directory, 'objects'));
    const body = new Uint8Array(objectBytes).fill(round & 0xff);
    const latencies: number[] = [];
    for (let index = 0; index < FLOOR_PUTS_PER_ROUND; index++) {
      const startMs = performance.now();
      await files.put(`floor/${round}/${index}`, body, { ifNoneMatch: '*' }); // as the WAL writer puts
      latencies.push(performance.now() - startMs);
    }
    return latencies;
  } finally {
    removeTempDir(directory);
  }
}

/** Adds one floor sample per PUT: linger + upload interval + that PUT. */
export function recordFloor(recorder: LatencyRecorder, shape: FloorShape, putsMs: readonly number[]): void {
  for (const putMs of putsMs) recorder.recordMs(shape.lingerMs + shape.uploadIntervalMs + putMs);
}
