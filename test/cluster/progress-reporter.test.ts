// A follower's progress reports (Kafka's replica Fetch) against a fake leader on loopback: the
// answers' high watermark reaches the follower, and a report is repeated until the answer covers it.
import { expect, test } from 'bun:test';
import { fetchCodec, type FetchRequest } from '../../src/broker/apis/fetch.ts';
import { readRequestHeader, writeResponseHeader } from '../../src/broker/protocol/header.ts';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { systemClock } from '../../src/util/clock.ts';

test('the leader high watermark in the answers reaches the follower; a report repeats until an answer covers it', async () => {
  const requests: FetchRequest[] = [];
  let committed = 0; // the fake leader commits offset 7 only after the third report
  const server = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, chunk) {
        let at = 0;
        while (at < chunk.length) {
          const size = new DataView(chunk.buffer, chunk.byteOffset + at).getInt32(0);
          const reader = new KafkaReader(chunk.subarray(at + 4, at + 4 + size));
          at += 4 + size;
          reader.int16();
          const version = reader.int16();
          reader.position = 0;
          const header = readRequestHeader(reader, false);
          const request = fetchCodec.decodeRequest(reader, version);
          requests.push(request);
          if (requests.length >= 3) committed = 7;
          const writer = new KafkaWriter();
          writeResponseHeader(writer, header.correlationId, false);
          fetchCodec.encodeResponse(writer, version, { throttleTimeMs: 0, errorCode: 0, sessionId: 0, responses: request.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: 0, highWatermark: committed, lastStableOffset: committed, logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1, records: [] })) })) });
          const body = concatBytes(writer.chunks());
          const frame = new Uint8Array(4 + body.length);
          new DataView(frame.buffer).setInt32(0, body.length);
          frame.set(body, 4);
          socket.write(frame);
        }
      },
    },
  });
  const heard: number[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock: systemClock, highWatermark: (topic, partition, hw) => heard.push(hw) });
  reporter.report('t', 0, 7, 3);
  const deadline = performance.now() + 10_000;
  while (!heard.includes(7) && performance.now() < deadline) await Bun.sleep(10);
  const reportsWhenCovered = requests.length;
  await Bun.sleep(200); // four repeat intervals: no more reports once an answer covered it
  reporter.close();
  server.stop(true);
  expect(heard.at(-1)).toBe(7);
  expect(heard.slice(0, 2)).toEqual([0, 0]);
  expect(requests[0]!.replicaId).toBe(2);
  expect(requests.every((r) => r.topics[0]!.partitions[0]!.fetchOffset === 7 && r.maxBytes === 0)).toBe(true);
  // Issue 9 finding 5: every report, repeats included, names the leader epoch followed (the leader counts it only in that epoch).
  expect(requests.every((r) => r.topics[0]!.partitions[0]!.currentLeaderEpoch === 3)).toBe(true);
  expect(requests.length).toBe(reportsWhenCovered);
});
