/**
 * What a WAL writer with no CPU cost would achieve on a given arrival schedule: the floor that
 * wal.bench.ts prints beside the engine. Batches arrive every `batchIntervalMs` (an open-loop
 * producer); objects close as docs/wal-protocol.md [W2] says (at `uploadBytes`, or
 * `uploadIntervalMs` after their first frame); PUT latencies are samples measured on a fresh
 * store. Nothing here is timed: it is arithmetic over the schedule.
 *
 * - floor: ideal batching wait (close time minus arrival) plus one PUT, for every batch: the
 *   issue's "one store PUT plus the batching interval", combined per batch rather than as
 *   percentiles added (percentiles do not add).
 * - in-order model: the same closes, uploads limited to `maxInFlight` at once and a batch
 *   durable only when its object and every earlier one are (invariant I3): what the protocol
 *   itself costs above the floor, before any implementation overhead.
 */
import { LatencyRecorder } from './latency.ts';

export interface BatchingShape {
  /** Size of a WAL object with no frames (header, empty footer, trailer). */
  readonly emptyObjectBytes: number;
  /** What one frame adds to the object (frame header, data, footer entry). */
  readonly frameBytes: number;
  readonly uploadBytes: number;
  readonly uploadIntervalMs: number;
  readonly maxInFlight: number;
}

export interface ScheduleShape {
  /** Batch i arrives at i * batchIntervalMs (from the run's start). */
  readonly batchIntervalMs: number;
  /** Batches in the whole run, warm-up included (earlier objects delay later ones in order). */
  readonly batchCount: number;
  /** Only batches in [windowFrom, windowTo) are recorded. */
  readonly windowFrom: number;
  readonly windowTo: number;
}

export interface ModelResult {
  /** Close time minus arrival, per batch. */
  readonly batchingWait: LatencyRecorder;
  readonly floor: LatencyRecorder;
  readonly inOrder: LatencyRecorder;
  readonly objectCount: number;
}

/** Frames that fill an object to `uploadBytes`: the writer closes after the frame that reaches it. */
export function framesPerObjectMax(shape: BatchingShape): number {
  return Math.max(1, Math.ceil((shape.uploadBytes - shape.emptyObjectBytes) / shape.frameBytes));
}

/** Where each batch of the schedule goes and when each object closes, with no CPU cost. */
export interface IdealObjects {
  /** The object of each batch. */
  readonly objectOf: Int32Array;
  readonly closeMs: readonly number[];
  readonly meanObjectBytes: number;
}

export function idealObjects(shape: BatchingShape, schedule: ScheduleShape): IdealObjects {
  const framesMax = framesPerObjectMax(shape);
  const { batchIntervalMs, batchCount } = schedule;
  const objectOf = new Int32Array(batchCount);
  const closeMs: number[] = [];
  for (let batch = 0; batch < batchCount; ) {
    const object = closeMs.length;
    const deadlineMs = batch * batchIntervalMs + shape.uploadIntervalMs;
    let frames = 0;
    while (batch < batchCount && frames < framesMax && (frames === 0 || batch * batchIntervalMs < deadlineMs)) {
      objectOf[batch++] = object;
      frames++;
    }
    closeMs.push(frames === framesMax ? (batch - 1) * batchIntervalMs : deadlineMs);
  }
  const meanObjectBytes = closeMs.length === 0 ? 0 : shape.emptyObjectBytes + (batchCount / closeMs.length) * shape.frameBytes;
  return { objectOf, closeMs, meanObjectBytes };
}

/**
 * The floor pairs each batch's ideal wait with a PUT of `floorPutsMs` (timed at the engine's mean
 * object size, as the issue defines it); the in-order model uploads the ideal objects with
 * `modelPutsMs` (timed at the ideal objects' mean size: when the engine fell behind, its objects
 * grew, and the model should not borrow their transfer time).
 */
export function modelWal(shape: BatchingShape, schedule: ScheduleShape, objects: IdealObjects, floorPutsMs: readonly number[], modelPutsMs: readonly number[]): ModelResult {
  if (floorPutsMs.length === 0 || modelPutsMs.length === 0) throw new Error('the WAL model needs PUT samples');
  const { objectOf, closeMs } = objects;
  // Uploads start in sequence order on the first free slot; durability advances in order.
  const slotFreeMs = new Array<number>(shape.maxInFlight).fill(0);
  const durableMs = new Float64Array(closeMs.length);
  let previousDurableMs = 0;
  for (let object = 0; object < closeMs.length; object++) {
    let slot = 0;
    for (let other = 1; other < slotFreeMs.length; other++) if (slotFreeMs[other]! < slotFreeMs[slot]!) slot = other;
    const startMs = Math.max(closeMs[object]!, slotFreeMs[slot]!);
    const completeMs = startMs + modelPutsMs[object % modelPutsMs.length]!;
    slotFreeMs[slot] = completeMs;
    previousDurableMs = Math.max(previousDurableMs, completeMs);
    durableMs[object] = previousDurableMs;
  }
  const result: ModelResult = { batchingWait: new LatencyRecorder(), floor: new LatencyRecorder(), inOrder: new LatencyRecorder(), objectCount: closeMs.length };
  for (let batch = schedule.windowFrom; batch < schedule.windowTo; batch++) {
    const arrivalMs = batch * schedule.batchIntervalMs;
    const object = objectOf[batch]!;
    const waitMs = closeMs[object]! - arrivalMs;
    result.batchingWait.recordMs(waitMs);
    result.floor.recordMs(waitMs + floorPutsMs[batch % floorPutsMs.length]!);
    result.inOrder.recordMs(durableMs[object]! - arrivalMs);
  }
  return result;
}
