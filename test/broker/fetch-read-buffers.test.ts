// RB1 end to end (src/broker/read-buffer-pool.ts): a Fetch response holds views of reused memory
// until its connection has written it. A client that sends a Fetch of 12 MB over 12 partitions and
// then does not read keeps most of that response unwritten; meanwhile kcat consumers of another
// topic have their fetches read into the broker's memory. When the stalled client reads at last,
// its response is byte for byte what a quiet Fetch of the same partitions answers: nothing another
// response read ever landed in memory a pending response still held.
import { expect, setDefaultTimeout, test } from 'bun:test';
import type { Socket } from 'bun';
import { fetchRequestSchema, fetchResponseSchema } from '../../src/protocol/messages/fetch.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { readAnswer, requestBytes, sized } from './auth/wire.ts';
import { useKcatBroker } from '../support/kcat-broker.ts';

setDefaultTimeout(120_000);

const STALLED_TOPICS = Array.from({ length: 12 }, (_, index) => `stalled-${index}`);
const BUSY_TOPIC = 'busy';
/** ~1 MB per stalled partition (the fetch asks 1 MiB of each: one read, one slab each), more than loopback buffers hold in all. */
const STALLED_MESSAGES = 1400;
const BUSY_MESSAGES = 8000;
const MESSAGE_BYTES = 700;
const FETCH_VERSION = 12;
const PARTITION_MAX_BYTES = 1024 * 1024;
const SIZE_PREFIX_BYTES = 4;
const { kcat, broker } = useKcatBroker('ferry-read-buffers-');

/** Distinct lines: bytes read from the wrong place never pass for the right ones. */
function linesOf(topic: string, count: number): string[] {
  return Array.from(
    { length: count },
    (_, index) =>
      `${topic} ${index} ${String(index * 7919)
        .repeat(MESSAGE_BYTES)
        .slice(0, MESSAGE_BYTES)}`,
  );
}

async function produce(topic: string, count: number): Promise<void> {
  const produced = await kcat(['-P', '-t', topic, '-p', '0', '-X', 'acks=all', '-X', 'batch.size=65536', '-X', 'linger.ms=5'], `${linesOf(topic, count).join('\n')}\n`);
  expect(produced.exitCode).toBe(0);
}

function fetchRequest(correlationId: number): Uint8Array {
  return requestBytes(fetchRequestSchema, FETCH_VERSION, correlationId, {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 0x7fff_ffff,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: STALLED_TOPICS.map((topic) => ({
      topic,
      partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0, lastFetchedEpoch: -1, logStartOffset: -1, partitionMaxBytes: PARTITION_MAX_BYTES }],
    })),
    forgottenTopicsData: [],
    rackId: '',
  });
}

/** A raw client that reads only when told: its Fetch response waits in the broker meanwhile. */
async function stalledClient(): Promise<{ socket: Socket<undefined>; received: Uint8Array[] }> {
  const received: Uint8Array[] = [];
  const socket = await Bun.connect({ hostname: '127.0.0.1', port: broker().port, socket: { data: (_socket, chunk) => void received.push(new Uint8Array(chunk)) } });
  socket.pause();
  return { socket, received };
}

/** Per stalled topic, the records of the one answer in `bytes` (a size-prefixed Fetch response). */
function recordsOf(bytes: Uint8Array): Buffer[] {
  const size = new DataView(bytes.buffer, bytes.byteOffset).getInt32(0);
  expect(bytes.length).toBe(SIZE_PREFIX_BYTES + size);
  const { body } = readAnswer(fetchResponseSchema, FETCH_VERSION, bytes.subarray(SIZE_PREFIX_BYTES));
  return body.responses.map((topic: { partitions: { errorCode: number; records: Uint8Array }[] }) => {
    expect(topic.partitions[0]!.errorCode).toBe(0);
    return Buffer.from(topic.partitions[0]!.records);
  });
}

async function readWhole(client: { received: Uint8Array[] }): Promise<Uint8Array> {
  for (;;) {
    const bytes = concatBytes(client.received);
    if (bytes.length >= SIZE_PREFIX_BYTES && bytes.length >= SIZE_PREFIX_BYTES + new DataView(bytes.buffer).getInt32(0)) return bytes;
    await Bun.sleep(5);
  }
}

test("a stalled client's Fetch response stays the log's bytes while other fetches reuse the broker's read memory", async () => {
  for (const topic of STALLED_TOPICS) await produce(topic, STALLED_MESSAGES);
  await produce(BUSY_TOPIC, BUSY_MESSAGES);

  const stalled = await stalledClient();
  stalled.socket.write(sized(fetchRequest(1)));
  await Bun.sleep(200); // the broker reads, writes what the socket takes, and waits for drain
  const busy = await Promise.all([1, 2, 3].map(() => kcat(['-C', '-t', BUSY_TOPIC, '-p', '0', '-o', 'beginning', '-e', '-q', '-X', 'check.crcs=true', '-X', 'fetch.wait.max.ms=10', '-f', '%s\\n'])));
  for (const run of busy) {
    expect(run.stderr).toBe('');
    expect(run.stdout.trim().split('\n')).toEqual(linesOf(BUSY_TOPIC, BUSY_MESSAGES));
  }
  stalled.socket.resume();
  const stalledAnswer = recordsOf(await readWhole(stalled));

  const quiet = await stalledClient();
  quiet.socket.resume();
  quiet.socket.write(sized(fetchRequest(2)));
  const quietAnswer = recordsOf(await readWhole(quiet));
  stalled.socket.end();
  quiet.socket.end();

  expect(stalledAnswer.length).toBe(STALLED_TOPICS.length);
  for (const [index, records] of stalledAnswer.entries()) {
    expect(records.length).toBeGreaterThan(PARTITION_MAX_BYTES / 2);
    expect(records.equals(quietAnswer[index]!)).toBe(true);
  }
});
