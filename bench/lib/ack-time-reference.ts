/**
 * What the ack-latency probe gives against a broker that acknowledges every request exactly
 * `ackDelayMs` after it arrives: librdkafka's mock cluster with its responses delayed
 * (bench/mock-cluster/mock-cluster.c, ACK_DELAY_MS). With max.in.flight=1 a message first waits
 * for the request in flight to be answered, then for its own request: about 1.5 ack times at the
 * median and 2 at the tail, whatever the broker does. The broker bench runs it with its floor's
 * ack time (upload interval + one PUT), so the run shows how close to that floor any broker that
 * waits one upload interval before it acknowledges can come with this client.
 */
import { type AckLatencyRun, ackLatencies } from './kafka-clients.ts';
import { startMockCluster } from './kafka-targets.ts';

/** The mock delays responses by whole milliseconds. */
export function wholeAckDelayMs(ackTimeMs: number): number {
  return Math.max(1, Math.round(ackTimeMs));
}

/** The probe's latencies (ms) against the mock cluster acknowledging each request `ackDelayMs` (whole) after it arrives. */
export async function latenciesAtAckDelay(mockProgram: string, probeProgram: string, topic: string, ackDelayMs: number, run: AckLatencyRun): Promise<number[]> {
  const mock = await startMockCluster(mockProgram, topic, 1, wholeAckDelayMs(ackDelayMs));
  try {
    return await ackLatencies(probeProgram, mock.bootstrap, topic, run);
  } finally {
    await mock.stop();
  }
}
