/**
 * The bytes a collected WAL store should hold in steady state, from the configuration alone
 * (issue 11 item 6: "a few segments per partition plus what is in flight"). A WAL object holds
 * frames of many partitions, so it can go only once every partition's frames in it are tiered:
 * the store holds everything written since the oldest untiered frame of any partition.
 * Per partition that is its active segment (a segment is tiered only once rolled) and one rolled
 * segment waiting for its upload; across the store, what was written while the tierer and the
 * collector wait for their next rounds, and the objects still being uploaded.
 */
export interface WalBoundInputs {
  readonly partitions: number;
  readonly segmentBytes: number;
  /** Rolled segments per partition that may wait for their tier upload at once. */
  readonly rolledSegmentsWaiting: number;
  /** Records produced per second, all partitions together. */
  readonly produceBytesPerSecond: number;
  readonly tierIntervalMs: number;
  readonly gcIntervalMs: number;
  /** WAL objects uploading at once, each up to uploadBytes. */
  readonly maxInFlight: number;
  readonly uploadBytes: number;
  /** WAL object bytes per produced byte (frame headers and footers): measured, at least 1. */
  readonly walBytesPerProducedByte: number;
}

export interface WalBound {
  readonly segmentsBytes: number;
  readonly waitingRoundsBytes: number;
  readonly inFlightBytes: number;
  readonly totalBytes: number;
}

const MS_PER_SECOND = 1000;

export function walBound(inputs: WalBoundInputs): WalBound {
  for (const [name, value] of Object.entries(inputs)) if (!(value >= 0) || !Number.isFinite(value)) throw new Error(`walBound: ${name} must be a finite number >= 0, got ${value}`);
  if (inputs.walBytesPerProducedByte < 1) throw new Error('walBound: a WAL object holds at least the bytes produced into it');
  const segmentsBytes = inputs.partitions * inputs.segmentBytes * (1 + inputs.rolledSegmentsWaiting) * inputs.walBytesPerProducedByte;
  const waitingRoundsBytes = ((inputs.produceBytesPerSecond * (inputs.tierIntervalMs + inputs.gcIntervalMs)) / MS_PER_SECOND) * inputs.walBytesPerProducedByte;
  const inFlightBytes = inputs.maxInFlight * inputs.uploadBytes;
  return { segmentsBytes, waitingRoundsBytes, inFlightBytes, totalBytes: segmentsBytes + waitingRoundsBytes + inFlightBytes };
}
