import { decodeControlRecord } from '../control/control-record.ts';
import type { BrokerRecord, PartitionRecord } from '../cluster/control-records.ts';
import type { LeaseRenewal, PartitionRecordWrite } from './history.ts';

/**
 * Broker records and partition records (ControlStore's root: no prefix in the simulation, in the
 * control store of a cluster or the WAL store of a lone broker). Topic names hold no '/'.
 */
const BROKER_RECORD_KEY = /^control\/brokers\/(\d+)$/;
const PARTITION_RECORD_KEY = /^control\/partitions\/([^/]+)\/(\d+)$/;

/** One send of a write, not yet taken by the store. */
interface Send {
  readonly process: string;
  readonly sentMs: number;
}

/**
 * Every write of a broker record (leases, [C1]) and of a partition record (claims, [C3]) that took
 * effect, in the store's order, with the process that sent it and when (leader-within-lease). A
 * process's store view tells `sent` as each write leaves the process (every attempt); the shared
 * store tells `put` as it takes one (MemoryStore's onPut, so a write whose answer was lost is here
 * too). The two are matched by the written bytes, which a control record's nonce makes unique to
 * one write (CW1); a write sent again with the same bytes is matched to its latest send.
 */
export class LeaseWrites {
  readonly renewals: LeaseRenewal[] = [];
  readonly partitionWrites: PartitionRecordWrite[] = [];
  readonly #nowMs: () => number;
  /** Sends not taken yet, by the bytes written. */
  readonly #sends = new Map<string, Send[]>();
  readonly #decoder = new TextDecoder();

  /** `nowMs`: simulated ms on the ops' time base. */
  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** `process` sends a put of `body` to `key` now (any key: only broker and partition records are kept). */
  sent(process: string, key: string, body: Uint8Array): void {
    if (!BROKER_RECORD_KEY.test(key) && !PARTITION_RECORD_KEY.test(key)) return;
    const text = this.#decoder.decode(body);
    const sends = this.#sends.get(text);
    const send = { process, sentMs: this.#nowMs() };
    if (sends === undefined) this.#sends.set(text, [send]);
    else sends.push(send);
  }

  /** The store took a put of `body` to `key` (any key). A write no process was seen sending (the harness's own) is not kept. */
  put(key: string, body: Uint8Array): void {
    const broker = BROKER_RECORD_KEY.exec(key);
    const partition = broker === null ? PARTITION_RECORD_KEY.exec(key) : null;
    if (broker === null && partition === null) return;
    const text = this.#decoder.decode(body);
    const send = this.#take(text);
    if (send === null) return;
    const takenMs = this.#nowMs();
    if (broker !== null) {
      const record = decodeControlRecord<BrokerRecord>(body).value;
      this.renewals.push({ process: send.process, node: Number(broker[1]), sentMs: send.sentMs, takenMs, leaseMs: record.leaseMs, resigned: record.renewedAtMs === 0 });
      return;
    }
    const record = decodeControlRecord<PartitionRecord>(body).value;
    this.partitionWrites.push({ process: send.process, topic: partition![1]!, partition: Number(partition![2]), leader: record.leader, leaderEpoch: record.leaderEpoch, takenMs });
  }

  /** The latest send of these bytes, forgotten once taken. */
  #take(text: string): Send | null {
    const sends = this.#sends.get(text);
    const send = sends?.pop() ?? null;
    if (sends !== undefined && sends.length === 0) this.#sends.delete(text);
    return send;
  }
}
