// Review finding ([R1]-[R3]): a progress report answered after the follower moved to a new leader
// epoch of the same leader (it claimed the partition again, [C7]). The answer to the old epoch's
// report (counted by the leader while it still served that epoch) reached the follower after the
// report in the new epoch was sent, and was taken as confirming it: the new epoch's report was
// dropped from the repeats, so when the leader answered it UNKNOWN_LEADER_EPOCH (it had not adopted
// the new epoch yet) nothing was sent again, and the leader never heard of the follower in its new
// leadership (acks=all with min.insync.replicas > 1 waits on the follower's next applied object).
import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { fetchCodec, type FetchRequest } from '../../src/broker/apis/fetch.ts';
import { readRequestHeader, writeResponseHeader } from '../../src/broker/protocol/header.ts';
import { ErrorCode } from '../../src/broker/protocol/error-codes.ts';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';
import { PROGRESS_REPEAT_INTERVAL_MS, ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { until } from '../support/until.ts';

const OLD_EPOCH = 5;
const NEW_EPOCH = 6;
const LOG_END = 7;

/** The answer to `request`: each partition as `of` says (error code, high watermark). */
function answer(version: number, correlationId: number, request: FetchRequest, errorCode: number, highWatermark: number, of: (topic: string) => [number, number] = () => [errorCode, highWatermark]): Uint8Array {
  const writer = new KafkaWriter();
  writeResponseHeader(writer, correlationId, false);
  fetchCodec.encodeResponse(writer, version, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: request.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: of(t.topic)[0], highWatermark: of(t.topic)[1], lastStableOffset: of(t.topic)[1], logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1, records: [] })) })) });
  const body = concatBytes(writer.chunks());
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, 4);
  return frame;
}

test('an answer to the old epoch arriving after the report in the new one does not stop that report repeating', async () => {
  const requests: FetchRequest[] = [];
  let held: { socket: Socket<undefined>; frame: Uint8Array } | null = null;
  let received: Uint8Array = new Uint8Array(0);
  const server = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, chunk) {
        received = concatBytes([received, chunk]);
        while (received.length >= 4 && received.length >= 4 + new DataView(received.buffer, received.byteOffset).getInt32(0)) {
          const size = new DataView(received.buffer, received.byteOffset).getInt32(0);
          const reader = new KafkaReader(received.subarray(4, 4 + size));
          received = received.slice(4 + size);
          reader.int16();
          const version = reader.int16();
          reader.position = 0;
          const header = readRequestHeader(reader, false);
          const request = fetchCodec.decodeRequest(reader, version);
          requests.push(request);
          const epoch = request.topics[0]!.partitions[0]!.currentLeaderEpoch;
          if (requests.length === 1) {
            // The leader, still in the old epoch, counts it; its answer is slow to arrive.
            held = { socket, frame: answer(version, header.correlationId, request, ErrorCode.NONE, LOG_END) };
          } else if (requests.length === 2) {
            // The new epoch's report overtakes it; the leader has not adopted that epoch yet.
            expect(epoch).toBe(NEW_EPOCH);
            // One write: the follower reads both answers in one go, the old epoch's first.
            socket.write(concatBytes([held!.frame, answer(version, header.correlationId, request, 0, 0, (topic) => (topic === 't' ? [ErrorCode.UNKNOWN_LEADER_EPOCH, -1] : [ErrorCode.NONE, LOG_END]))]));
          } else {
            socket.write(answer(version, header.correlationId, request, epoch === NEW_EPOCH ? ErrorCode.NONE : ErrorCode.FENCED_LEADER_EPOCH, epoch === NEW_EPOCH ? LOG_END : -1));
          }
        }
      },
    },
  });
  const clock = new ManualClock();
  const heard: string[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock, highWatermark: (topic) => heard.push(topic) });
  try {
    reporter.report('t', 0, LOG_END, OLD_EPOCH);
    await until(() => requests.length === 1, 'the report in the old epoch');
    reporter.report('t', 0, LOG_END, NEW_EPOCH); // the follower's scan saw the leader's claim one epoch up
    reporter.report('u', 0, LOG_END, NEW_EPOCH); // another partition of the same leader, in the same request: its answer shows both were read
    await until(() => requests.length === 2, 'the report in the new epoch');
    await until(() => heard.includes('u'), 'the answers reaching the follower'); // both, read together, the old epoch's first
    // The leader adopts the new epoch; the follower's repeat must reach it in that epoch.
    for (let repeat = 0; repeat < 4 && requests.length < 3; repeat++) {
      clock.advance(PROGRESS_REPEAT_INTERVAL_MS);
      await Bun.sleep(20);
    }
    expect(requests.length).toBeGreaterThanOrEqual(3);
    const repeated = requests[2]!.topics.find((t) => t.topic === 't');
    expect(repeated?.partitions[0]!.currentLeaderEpoch).toBe(NEW_EPOCH);
  } finally {
    reporter.close();
    server.stop(true);
  }
});
