// Review finding ([R2], [L4], issue 9 finding 12): a progress report's answer that arrives after
// the follower stopped reporting the partition (its topic was deleted; forget) still passed its
// high watermark on. The partition's next follow under the same name (the new incarnation, same
// leader) took it as the leader's high watermark, which a follower only ever raises: it served
// the new incarnation's records up to the old incarnation's high watermark, uncommitted ones too.
import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { fetchCodec, type FetchRequest } from '../../src/broker/apis/fetch.ts';
import { readRequestHeader, writeResponseHeader } from '../../src/broker/protocol/header.ts';
import { ErrorCode } from '../../src/broker/protocol/error-codes.ts';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { until } from '../support/until.ts';

/** The old incarnation's committed end, and the new one's (nothing committed yet). */
const OLD_HIGH_WATERMARK = 500;
const NEW_HIGH_WATERMARK = 0;

function answer(version: number, correlationId: number, request: FetchRequest, highWatermark: number): Uint8Array {
  const writer = new KafkaWriter();
  writeResponseHeader(writer, correlationId, false);
  fetchCodec.encodeResponse(writer, version, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: request.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: ErrorCode.NONE, highWatermark, lastStableOffset: highWatermark, logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1, records: [] })) })) });
  const body = concatBytes(writer.chunks());
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, 4);
  return frame;
}

test('an answer to a report of a partition no longer reported is not taken as its leader high watermark', async () => {
  const requests: FetchRequest[] = [];
  let held: Uint8Array | null = null;
  let received: Uint8Array = new Uint8Array(0);
  const server = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket: Socket<undefined>, chunk) {
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
          // The old incarnation's answer is slow; it arrives with the new incarnation's, first.
          if (requests.length === 1) held = answer(version, header.correlationId, request, OLD_HIGH_WATERMARK);
          else socket.write(concatBytes([...(held === null ? [] : [held]), answer(version, header.correlationId, request, NEW_HIGH_WATERMARK)]));
          if (requests.length > 1) held = null;
        }
      },
    },
  });
  const heard: number[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock: new ManualClock(), highWatermark: (_topic, _partition, highWatermark) => heard.push(highWatermark) });
  try {
    reporter.report('t', 0, OLD_HIGH_WATERMARK, 4); // the old incarnation, in its leader epoch
    await until(() => requests.length === 1, 'the old incarnation\'s report');
    reporter.forget('t', 0); // the topic was deleted
    reporter.report('t', 0, 3, 5); // created again, the same leader: three records applied, none committed
    await until(() => heard.length > 0 && heard.at(-1) === NEW_HIGH_WATERMARK, 'the new incarnation\'s answer');
    expect(heard).not.toContain(OLD_HIGH_WATERMARK);
  } finally {
    reporter.close();
    server.stop(true);
  }
});
