/**
 * What the ack-latency probe gives against a broker that acknowledges every request exactly
 * `ackDelayMs` after it arrives: librdkafka's mock cluster with its responses delayed
 * (bench/mock-cluster/mock-cluster.c, ACK_DELAY_MS). With max.in.flight=1 a message first waits
 * for the request in flight to be answered, then for its own request: about 1.5 ack times at the
 * median and 2 at the tail, whatever the broker does. The broker bench runs it with its floor's
 * ack time (upload interval + one PUT), so the run shows how close to that floor any broker that
 * waits one upload interval before it acknowledges can come with this client.
 *
 * The same mock under kcat's throughput run shows what the acknowledgement's delay alone costs
 * there: the client keeps every unacknowledged message in its queue, which stays full against a
 * server that answers later, and on a machine whose cores the client shares with the server its
 * CPU per MB then bounds the rate (issue 27 part seven: 200 MB of 1 KiB values took kcat 0.9-1.0
 * CPU-s against the mock, 2.1 against it delayed 90 ms, at 290 and 123 MB/s).
 */
import { type AckLatencyRun, ackLatencies, type ClientConfig, type ClientRun, kcatProduceFile } from './kafka-clients.ts';
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

/**
 * kcat's timed run of `file` against the mock cluster acknowledging every request `ackDelayMs`
 * (whole) after it arrives, after an untimed run of the same file (as the broker bench's rounds do).
 */
export async function kcatRunAtAckDelay(mockProgram: string, kcat: string, topic: string, file: string, config: ClientConfig, ackDelayMs: number): Promise<ClientRun> {
  const mock = await startMockCluster(mockProgram, topic, 1, wholeAckDelayMs(ackDelayMs));
  try {
    await kcatProduceFile(kcat, mock.bootstrap, topic, file, config);
    return await kcatProduceFile(kcat, mock.bootstrap, topic, file, config);
  } finally {
    await mock.stop();
  }
}
