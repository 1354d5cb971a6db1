// A fake partition leader on loopback for follower progress-report tests: it decodes each replica
// Fetch (frames split or joined across TCP reads) and hands it to the test, which answers when and
// how it likes with `fetchAnswer` frames.
import type { Socket } from 'bun';
import { fetchCodec, type FetchRequest } from '../../src/broker/apis/fetch.ts';
import { readRequestHeader, writeResponseHeader } from '../../src/protocol/header.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { concatBytes } from '../../src/util/bytes.ts';

const SIZE_PREFIX_BYTES = 4;

export interface ReceivedFetch {
  readonly request: FetchRequest;
  readonly version: number;
  readonly correlationId: number;
  readonly socket: Socket<undefined>;
}

/** Listens on 127.0.0.1 and calls `onFetch` for each replica Fetch received, in order. */
export function listenFakeFetchLeader(onFetch: (fetch: ReceivedFetch) => void): { readonly port: number; stop(): void } {
  let received: Uint8Array = new Uint8Array(0);
  const server = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, chunk) {
        received = concatBytes([received, chunk]);
        for (;;) {
          if (received.length < SIZE_PREFIX_BYTES) return;
          const size = new DataView(received.buffer, received.byteOffset).getInt32(0);
          if (received.length < SIZE_PREFIX_BYTES + size) return;
          const reader = new KafkaReader(received.subarray(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size));
          received = received.slice(SIZE_PREFIX_BYTES + size);
          reader.int16();
          const version = reader.int16();
          reader.position = 0;
          const header = readRequestHeader(reader, false);
          onFetch({ request: fetchCodec.decodeRequest(reader, version), version, correlationId: header.correlationId, socket });
        }
      },
    },
  });
  return { port: server.port, stop: () => server.stop(true) };
}

/** The framed answer to `fetch`: each partition's error code, high watermark and log start (0 unless given) as `of` says (by topic). */
export function fetchAnswer(fetch: ReceivedFetch, of: (topic: string) => { errorCode?: number; highWatermark: number; logStartOffset?: number }): Uint8Array {
  const writer = new KafkaWriter();
  writeResponseHeader(writer, fetch.correlationId, false);
  fetchCodec.encodeResponse(writer, fetch.version, {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: fetch.request.topics.map((t) => {
      const { errorCode = ErrorCode.NONE, highWatermark, logStartOffset = 0 } = of(t.topic);
      return {
        topic: t.topic,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partition,
          errorCode,
          highWatermark,
          lastStableOffset: highWatermark,
          logStartOffset,
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: [],
        })),
      };
    }),
  });
  const body = concatBytes(writer.chunks());
  const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, SIZE_PREFIX_BYTES);
  return frame;
}
