import type { Socket } from 'bun';
import { KafkaWriter } from '../broker/protocol/writer.ts';
import { concatBytes } from '../util/bytes.ts';

const FETCH_API_KEY = 1;
const FETCH_VERSION = 11;
const CLIENT_ID = 'ferry-replica';

/**
 * How a follower broker tells a leader what it applied, so that acks=all can wait for
 * min.insync.replicas: Kafka's own signal, a Fetch with the follower's replica id whose fetch
 * offsets are its log end offsets. It asks for no data (max bytes 0): the data comes from the
 * object store. Reports to one leader are coalesced into one request per turn.
 */
export class ProgressReporter {
  readonly #replicaId: number;
  readonly #host: string;
  readonly #port: number;
  #socket: Promise<Socket<undefined>> | null = null;
  readonly #pending = new Map<string, { topic: string; partition: number; logEndOffset: number }>();
  #scheduled = false;
  #correlationId = 0;
  #closed = false;

  constructor(replicaId: number, host: string, port: number) {
    this.#replicaId = replicaId;
    this.#host = host;
    this.#port = port;
  }

  report(topic: string, partition: number, logEndOffset: number): void {
    if (this.#closed) return;
    this.#pending.set(`${topic}/${partition}`, { topic, partition, logEndOffset });
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#send().catch(() => {
        this.#socket = null; // the leader went away: the next report reconnects (or another leader takes over)
      });
    });
  }

  close(): void {
    this.#closed = true;
    void this.#socket?.then((socket) => socket.end()).catch(() => {});
  }

  async #send(): Promise<void> {
    const reports = [...this.#pending.values()];
    this.#pending.clear();
    if (reports.length === 0) return;
    const socket = await (this.#socket ??= Bun.connect({ hostname: this.#host, port: this.#port, socket: { data() {}, close: () => void (this.#socket = null), error: () => void (this.#socket = null) } }));
    const body = concatBytes(encodeReport(this.#replicaId, ++this.#correlationId, reports));
    const frame = new Uint8Array(4 + body.length);
    new DataView(frame.buffer).setInt32(0, body.length);
    frame.set(body, 4);
    socket.write(frame);
  }
}

function encodeReport(replicaId: number, correlationId: number, reports: { topic: string; partition: number; logEndOffset: number }[]): Uint8Array[] {
  const byTopic = new Map<string, { partition: number; logEndOffset: number }[]>();
  for (const report of reports) byTopic.set(report.topic, [...(byTopic.get(report.topic) ?? []), report]);
  const writer = new KafkaWriter().int16(FETCH_API_KEY).int16(FETCH_VERSION).int32(correlationId).nullableString(CLIENT_ID);
  writer.int32(replicaId).int32(0).int32(0).int32(0).int8(0).int32(0).int32(-1); // no wait, no bytes, no session
  writer.array([...byTopic], (w, [topic, partitions]) => {
    w.string(topic).array(partitions, (pw, p) => pw.int32(p.partition).int32(-1).int64(p.logEndOffset).int64(-1).int32(0));
  });
  writer.int32(0).string(''); // no forgotten topics, no rack
  return writer.chunks();
}
