import { type Decoded, decodeMessage, type Draft, encodeMessage } from '../protocol/message-codec.ts';
import { type FetchRequest, fetchRequestSchema, type FetchResponse, fetchResponseSchema } from '../protocol/messages/fetch.ts';
import { KafkaReader } from '../protocol/reader.ts';
import { KafkaWriter } from '../protocol/writer.ts';
import { UNKNOWN_LOG_START } from '../partition/isr.ts';
import { concatBytes } from '../util/bytes.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { NetSocket, Network } from '../util/network.ts';
import { systemNetwork } from '../util/system-network.ts';
import type { ListenerEndpoint } from './endpoints.ts';
import { connectToBroker, type InterBrokerConnector, PLAINTEXT_CONNECTOR } from './inter-broker-connection.ts';

const FETCH_VERSION = 11;
/** Kafka's FINAL_EPOCH: a full fetch outside any session. */
const NO_SESSION_EPOCH = -1;
const CLIENT_ID = 'ferry-replica';
const SIZE_PREFIX_BYTES = 4;
/** An answer to a report carries no records: a few bytes per partition. Larger means a broken peer (the connection restarts). */
const ANSWER_BYTES_MAX = 1024 * 1024;
/**
 * How often a report is sent again while the leader's answer shows a high watermark below it
 * (another follower is behind, the leader has not seen its own object durable yet, or the report
 * was lost with a connection): the follower learns the leader's high watermark within this, and
 * the leader hears of progress it missed. One small request per leader per interval while any
 * partition waits; a longer interval lets a follower serve committed records later (KIP-392).
 */
export const PROGRESS_REPEAT_INTERVAL_MS = 50;
/**
 * How often a follower repeats its latest reports to a leader it sent nothing to meanwhile, even
 * when every answer covered them ([R6]): an idle follower sends nothing else, and its answers are
 * how it learns a leader's new log start (DeleteRecords waits for the in-sync followers to take
 * it up). A follower cannot tell when a delete waits, so the repeat is unconditional, as Kafka's
 * followers fetch continuously; at Kafka's replica.fetch.wait.max.ms (an idle Kafka follower's
 * fetch returns at this pace) it bounds a delete's wait at about this plus two round trips, for one
 * small request per leader per interval (all its partitions in one request). Shorter answers
 * deletes sooner for more idle requests; longer needs a longer DeleteRecords timeout.
 */
export const PROGRESS_HEARTBEAT_INTERVAL_MS = 500;
/**
 * Requests on one connection still unanswered, at most: past it the leader is taken for one that
 * does not answer and the connection restarts (the reports repeat on the next). Each holds its
 * reports (a few bytes per partition) until answered: about a minute of repeats.
 */
const UNANSWERED_REQUESTS_MAX = 1024;

interface Report {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: number;
  /** Where the follower's log starts: the leader's DeleteRecords waits for it [R6]. */
  readonly logStartOffset: number;
  /** The leader epoch the follower follows (current_leader_epoch): the leader counts the report only in that epoch [R2]. */
  readonly leaderEpoch: number;
}

export interface ProgressReporterOptions {
  readonly clock: Clock;
  /** Where it connects to the leader; the operating system's sockets by default. */
  readonly network?: Network;
  /** How it reaches and authenticates to the leader's inter-broker listener; plain TCP to host and port by default. */
  readonly connector?: InterBrokerConnector;
  /** The leader's listeners (its broker record's endpoints), where the connector's listener is looked up. */
  readonly endpoints?: readonly ListenerEndpoint[];
  /** The leader's answer to a report: its high watermark for the partition (a follower caps its own by it). */
  highWatermark(topic: string, partition: number, highWatermark: number): void;
  /** The leader's answer names a log start above the one reported: the follower takes it up (and reports it) [R6]. Absent: ignored. */
  logStart?(topic: string, partition: number, logStartOffset: number): void;
}

/**
 * How a follower broker tells a leader what it applied, so that acks=all can wait for
 * min.insync.replicas: Kafka's own signal, a Fetch with the follower's replica id whose fetch
 * offsets are its log end offsets. It asks for no data (max bytes 0): the data comes from the
 * object store. The answers carry the leader's high watermark, as Kafka's replica fetches do.
 * Reports to one leader are coalesced into one request per turn; a report is repeated until an
 * answer shows the high watermark at it (PROGRESS_REPEAT_INTERVAL_MS), and the latest reports
 * again while nothing else went to the leader for PROGRESS_HEARTBEAT_INTERVAL_MS. The answers'
 * log start reaches the follower too (DeleteRecords, [R6]).
 */
export class ProgressReporter {
  readonly #replicaId: number;
  readonly #host: string;
  readonly #port: number;
  readonly #options: ProgressReporterOptions;
  #socket: Promise<NetSocket> | null = null;
  readonly #pending = new Map<string, Report>();
  /** The latest report of every partition reported here (until forgotten): what a heartbeat repeats. */
  readonly #latest = new Map<string, Report>();
  /** Reported, and not yet answered with a high watermark at or past the report. */
  readonly #unconfirmed = new Map<string, Report>();
  /**
   * The reports each request in flight carried, by correlation id: an answer confirms only the
   * report it answers. A report may be replaced while its request is in flight (the follower moved
   * to a new leader epoch, [R3]), and the old epoch's answer confirms nothing of the new one.
   */
  readonly #sent = new Map<number, Map<string, Report>>();
  #received: Uint8Array = new Uint8Array(0);
  #repeatTimer: Timer | null = null;
  #heartbeatTimer: Timer | null = null;
  /** Monotonic time of the last request sent (or attempted): a heartbeat goes only after a silence. */
  #lastSentMs = Number.NEGATIVE_INFINITY;
  #scheduled = false;
  #correlationId = 0;
  #closed = false;

  constructor(replicaId: number, host: string, port: number, options: ProgressReporterOptions) {
    this.#replicaId = replicaId;
    this.#host = host;
    this.#port = port;
    this.#options = options;
  }

  /**
   * Reports the log end and log start of a partition followed in `leaderEpoch` (the epoch of the
   * leader it follows); UNKNOWN_LOG_START (Kafka's default) for a log start it does not say.
   */
  report(topic: string, partition: number, logEndOffset: number, leaderEpoch: number, logStartOffset = UNKNOWN_LOG_START): void {
    if (this.#closed) return;
    const report = { topic, partition, logEndOffset, logStartOffset, leaderEpoch };
    this.#pending.set(`${topic}/${partition}`, report);
    this.#latest.set(`${topic}/${partition}`, report);
    this.#schedule();
  }

  /** Stops reporting the partition here (it follows another leader now, or no longer at all). */
  forget(topic: string, partition: number): void {
    this.#pending.delete(`${topic}/${partition}`);
    this.#latest.delete(`${topic}/${partition}`);
    this.#unconfirmed.delete(`${topic}/${partition}`);
    // Answers still on their way speak of what it followed before (a deleted incarnation, another leadership): none counts.
    for (const reports of this.#sent.values()) reports.delete(`${topic}/${partition}`);
  }

  close(): void {
    this.#closed = true;
    this.#repeatTimer?.cancel();
    this.#heartbeatTimer?.cancel();
    void this.#socket?.then((socket) => socket.end()).catch(() => {});
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      void this.#send().catch(() => {
        this.#socket = null; // the leader went away: the repeat reconnects (or the reports move to another leader)
      });
    });
  }

  async #send(): Promise<void> {
    const reports = [...this.#pending.values()];
    this.#pending.clear();
    if (reports.length === 0 || this.#closed) return;
    for (const report of reports) this.#unconfirmed.set(`${report.topic}/${report.partition}`, report);
    this.#lastSentMs = this.#options.clock.monotonicMs();
    this.#repeatLater();
    this.#heartbeatLater();
    const socket = await (this.#socket ??= this.#connect());
    const correlationId = ++this.#correlationId;
    if (this.#sent.size >= UNANSWERED_REQUESTS_MAX) {
      this.#dropConnection();
      return;
    }
    this.#sent.set(correlationId, new Map(reports.map((report) => [`${report.topic}/${report.partition}`, report])));
    const body = concatBytes(encodeReport(this.#replicaId, correlationId, reports));
    const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
    new DataView(frame.buffer).setInt32(0, body.length);
    frame.set(body, SIZE_PREFIX_BYTES);
    socket.write(frame);
  }

  #connect(): Promise<NetSocket> {
    this.#received = new Uint8Array(0);
    this.#sent.clear(); // what the earlier connection carried is answered there or never: its late answers count for nothing
    // Only this connection's own end clears it: a late close of an earlier one must not drop a newer one.
    const gone = () => void (this.#socket === connecting && (this.#socket = null));
    const leader = { host: this.#host, port: this.#port, ...(this.#options.endpoints === undefined ? {} : { endpoints: this.#options.endpoints }) };
    const connecting: Promise<NetSocket> = connectToBroker(this.#options.network ?? systemNetwork, this.#options.connector ?? PLAINTEXT_CONNECTOR, leader, {
      // An earlier connection's late bytes belong to no frame of this one: dropped.
      data: (_socket, chunk) => void (this.#socket === connecting && this.#onData(chunk)),
      close: gone,
      error: gone,
    });
    return connecting;
  }

  /** Re-sends what is unconfirmed after PROGRESS_REPEAT_INTERVAL_MS, while anything is. */
  #repeatLater(): void {
    if (this.#repeatTimer !== null || this.#closed) return;
    this.#repeatTimer = this.#options.clock.setTimer(
      PROGRESS_REPEAT_INTERVAL_MS,
      () => {
        this.#repeatTimer = null;
        if (this.#closed || this.#unconfirmed.size === 0) return;
        for (const [key, report] of this.#unconfirmed) if (!this.#pending.has(key)) this.#pending.set(key, report);
        this.#schedule();
      },
      true,
    );
  }

  /**
   * Repeats the latest reports once nothing went to the leader for PROGRESS_HEARTBEAT_INTERVAL_MS,
   * while anything is reported here: a failed send (the leader away) is retried this way too.
   */
  #heartbeatLater(): void {
    if (this.#heartbeatTimer !== null || this.#closed) return;
    const dueMs = this.#lastSentMs + PROGRESS_HEARTBEAT_INTERVAL_MS - this.#options.clock.monotonicMs();
    this.#heartbeatTimer = this.#options.clock.setTimer(
      Math.max(0, dueMs),
      () => {
        this.#heartbeatTimer = null;
        if (this.#closed || this.#latest.size === 0) return;
        if (this.#options.clock.monotonicMs() - this.#lastSentMs < PROGRESS_HEARTBEAT_INTERVAL_MS) {
          this.#heartbeatLater(); // something went since this was set: the silence starts from there
          return;
        }
        for (const [key, report] of this.#latest) if (!this.#pending.has(key)) this.#pending.set(key, report);
        this.#schedule();
      },
      true,
    );
  }

  #onData(chunk: Uint8Array): void {
    if (this.#closed) return; // a closed reporter's late answers reach nobody (a new reporter to the same leader may follow its partitions)
    this.#received = this.#received.length === 0 ? chunk : concatBytes([this.#received, chunk]);
    while (this.#received.length >= SIZE_PREFIX_BYTES) {
      const size = new DataView(this.#received.buffer, this.#received.byteOffset).getInt32(0);
      if (size < 0 || size > ANSWER_BYTES_MAX) {
        this.#dropConnection();
        return;
      }
      if (this.#received.length < SIZE_PREFIX_BYTES + size) return;
      const frame = this.#received.subarray(SIZE_PREFIX_BYTES, SIZE_PREFIX_BYTES + size);
      this.#received = this.#received.subarray(SIZE_PREFIX_BYTES + size);
      let answered: ReturnType<typeof decodeAnswer>;
      try {
        answered = decodeAnswer(frame);
      } catch {
        this.#dropConnection(); // not an answer we understand: start afresh (the reports repeat)
        return;
      }
      const sent = this.#sent.get(answered.correlationId);
      // Answers come in request order: requests before this one will never be answered now (a dropped connection's).
      for (const id of this.#sent.keys()) if (id <= answered.correlationId) this.#sent.delete(id);
      for (const answer of answered.answers) this.#answered(answer, sent?.get(`${answer.topic}/${answer.partition}`));
    }
  }

  #dropConnection(): void {
    const socket = this.#socket;
    this.#socket = null;
    this.#received = new Uint8Array(0);
    this.#sent.clear();
    void socket?.then((s) => s.end()).catch(() => {});
  }

  /** `sent`: the report the answered request carried for the partition (undefined: forgotten since, or never asked). */
  #answered(answer: Answer, sent: Report | undefined): void {
    if (sent === undefined) return; // not a report of the partition as it is reported now (forgotten since)
    if (answer.errorCode !== 0 || answer.highWatermark < 0) return; // stays unconfirmed: repeated, or moved by a re-target
    this.#options.highWatermark(answer.topic, answer.partition, answer.highWatermark);
    // [R6] A DeleteRecords on the leader waits for this follower's log start: taken up (and reported) at once.
    if (answer.logStartOffset > sent.logStartOffset) this.#options.logStart?.(answer.topic, answer.partition, answer.logStartOffset);
    const key = `${answer.topic}/${answer.partition}`;
    const report = this.#unconfirmed.get(key);
    // Counted in the epoch it named only: an answer to an earlier epoch's report confirms nothing of a later one [R2].
    if (report !== undefined && sent?.leaderEpoch === report.leaderEpoch && answer.highWatermark >= report.logEndOffset) this.#unconfirmed.delete(key);
  }
}

/**
 * A replica Fetch at FETCH_VERSION (request header v1), by Kafka's schema: fetch offsets are the
 * follower's log ends, with its log starts; no wait, no bytes, no session.
 */
function encodeReport(replicaId: number, correlationId: number, reports: readonly Report[]): Uint8Array[] {
  const byTopic = new Map<string, Report[]>();
  for (const report of reports) byTopic.set(report.topic, [...(byTopic.get(report.topic) ?? []), report]);
  const writer = new KafkaWriter().int16(fetchRequestSchema.apiKey).int16(FETCH_VERSION).int32(correlationId).nullableString(CLIENT_ID);
  const request: Draft<FetchRequest> = {
    replicaId,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 0,
    sessionEpoch: NO_SESSION_EPOCH,
    topics: [...byTopic].map(([topic, partitions]) => ({
      topic,
      partitions: partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: p.leaderEpoch, fetchOffset: p.logEndOffset, logStartOffset: p.logStartOffset, partitionMaxBytes: 0 })),
    })),
  };
  encodeMessage(fetchRequestSchema, writer, FETCH_VERSION, request);
  return writer.chunks();
}

/** What a leader answered for one partition of a report. */
interface Answer {
  readonly topic: string;
  readonly partition: number;
  readonly errorCode: number;
  readonly highWatermark: number;
  readonly logStartOffset: number;
}

/** A Fetch response at FETCH_VERSION (header v0): the request it answers, and each partition's error code, high watermark and log start. */
function decodeAnswer(frame: Uint8Array): { correlationId: number; answers: Answer[] } {
  const reader = new KafkaReader(frame);
  const correlationId = reader.int32(); // which request it answers (answers come in request order)
  const response = decodeMessage(fetchResponseSchema, reader, FETCH_VERSION) as Decoded<FetchResponse>;
  if (response.errorCode !== 0) return { correlationId, answers: [] };
  const answers = response.responses.flatMap((topic) =>
    topic.partitions.map(({ partitionIndex, errorCode, highWatermark, logStartOffset }) => ({ topic: topic.topic, partition: partitionIndex, errorCode, highWatermark, logStartOffset })),
  );
  return { correlationId, answers };
}
