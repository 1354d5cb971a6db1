/**
 * Peers' published produce latencies, drawn on the latency/cost plot. Each is the peer's own
 * published p99 as issue 14 lists it; none publishes a bill comparable with the sweep's x axis,
 * so each is drawn as a horizontal line at its latency, not as a point.
 */
export interface PeerLatency {
  readonly name: string;
  readonly p99Ms: number;
  /** "<" when the peer publishes a bound, not a value. */
  readonly bound: '=' | '<';
  readonly what: string;
}

export const PEER_LATENCIES: readonly PeerLatency[] = [
  { name: 'WarpStream S3E1Z', p99Ms: 169, bound: '=', what: 'WarpStream on S3 Express One Zone, produce p99' },
  { name: 'WarpStream Lightning', p99Ms: 50, bound: '=', what: 'WarpStream Lightning Topics, produce p99' },
  { name: 'Aiven diskless', p99Ms: 1600, bound: '=', what: 'Aiven Inkless (KIP-1150 diskless topics) on S3 Standard, produce p99' },
  { name: 'S2 Express', p99Ms: 50, bound: '<', what: 'S2 Express storage class, append p99 under 50 ms' },
];
