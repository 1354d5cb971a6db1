import { errorCodeOf } from '../broker/handlers/errors.ts';
import { isFerryError } from '../errors.ts';
import type { Engine } from '../engine/index.ts';
import type { SeededRandom } from '../util/random.ts';
import { batchValues } from './batch-values.ts';
import { errorName } from './client/api.ts';
import { EMBEDDED_NODE_ID, type SimEmbeddedHost } from './embedded-host.ts';
import type { EmbeddedScenario } from './embedded-scenario.ts';
import type { ClientOp, FetchOp, Outcome, ProbeResult, ProduceOp, ReadRecord } from './history.ts';
import type { SimScheduler } from './scheduler.ts';
import type { RunFor } from './workload.ts';

/** Between two produce calls: drawn in this range (simulated ms), as the broker runs' producers. */
const PRODUCE_GAP_MS_MIN = 10;
const PRODUCE_GAP_MS_MAX = 120;
/** Records per produce call (one batch), at most. */
const BATCH_RECORDS_MAX = 4;
/** How often the application reads each partition from where it got to. */
const READ_GAP_MS = 300;
/** A call the application gives up on (as a client's request.timeout.ms): recorded unanswered; it may still land. */
const CALL_TIMEOUT_MS = 30_000;
/** While the engine is not open (or the process paused): the application's wait before it looks again. */
const NOT_SERVING_WAIT_MS = 50;
/** Creating the topic at the start: the wait between tries. */
const SETUP_RETRY_MS = 500;
/** A probe's wait between two failed attempts. */
const PROBE_RETRY_MS = 250;
/** A read's size: enough for many batches of a run's small records. */
const READ_BYTES_MAX = 64 * 1024;
const APP_CLIENT = 'app';
const PROBE_CLIENT = 'probe';

export interface EmbeddedAppOptions {
  readonly scheduler: SimScheduler;
  readonly host: SimEmbeddedHost;
  readonly topics: readonly { readonly name: string; readonly partitions: number }[];
  readonly embedded: EmbeddedScenario;
  readonly record: (op: ClientOp) => void;
  readonly random: SeededRandom;
}

/** A call to the engine not yet answered: ended as unanswered if its process exits first or it times out. */
interface Call {
  finished: boolean;
  readonly endUnanswered: (error: string) => void;
}

/**
 * The application around an embedded engine: it creates its topic at the first open, then calls
 * `produce` with acks 'all' at drawn moments (bursts of calls to one partition, then another, so
 * partitions go quiet and are tiered and collected whole) and reads every partition through
 * `fetchWithTier` from where it got to. Each call is recorded as the simulated clients record
 * their requests (a ProduceOp or FetchOp of node EMBEDDED_NODE_ID), so the broker runs' checker
 * judges it. The application lives in the engine's process: a call in flight when the process
 * ends is unanswered, and nothing is called while the engine is not open or the process paused.
 */
export class EmbeddedApp {
  readonly #options: EmbeddedAppOptions;
  readonly #random: SeededRandom;
  readonly #calls = new Set<Call>();
  /** Each partition's next offset to read, by `topic/partition`. */
  readonly #readFrom = new Map<string, number>();
  #producing = false;
  #reading = false;
  #values = 0;
  #burstLeft = 0;
  #burstPartition = 0;

  constructor(options: EmbeddedAppOptions) {
    this.#options = options;
    this.#random = options.random;
    options.host.onExit = () => {
      for (const call of [...this.#calls]) call.endUnanswered('process exited');
    };
  }

  /** Calls in flight (produce and reads). */
  get pending(): number {
    return this.#calls.size;
  }

  /** Creates the topics once the engine serves (recorded as creates, which start their incarnations). */
  async setup(runFor: RunFor, boundMs: number): Promise<void> {
    let done = false;
    void (async () => {
      for (const topic of this.#options.topics) {
        for (;;) {
          const engine = this.#serving();
          const startMs = this.#now();
          if (engine !== null && this.#create(engine, topic, startMs)) break;
          await this.#sleep(SETUP_RETRY_MS);
        }
      }
      done = true;
    })();
    await runFor(boundMs, () => done);
  }

  start(): void {
    this.#producing = true;
    this.#reading = true;
    void this.#produceLoop();
    void this.#readLoop();
  }

  /**
   * After the faults: each partition must take an acks=all write and serve it back, each within
   * `boundMs` of `quietFromMs`. A probe that does not succeed in time is null.
   */
  async probe(quietFromMs: number, boundMs: number, runFor: RunFor): Promise<ProbeResult[]> {
    const deadline = quietFromMs + boundMs;
    const probes = this.#partitions().map(({ topic, partition }) => ({ topic, partition, writeAfterMs: null as number | null, readAfterMs: null as number | null, done: false }));
    for (const probe of probes) {
      void (async () => {
        while (this.#now() < deadline) {
          const value = `${PROBE_CLIENT}/${this.#values++}`;
          const baseOffset = await this.#produce(PROBE_CLIENT, probe.topic, probe.partition, [value]);
          if (baseOffset !== null) {
            probe.writeAfterMs = this.#now() - quietFromMs;
            if (await this.#readBack(probe.topic, probe.partition, baseOffset, value, deadline)) probe.readAfterMs = this.#now() - quietFromMs;
            break;
          }
          await this.#sleep(PROBE_RETRY_MS);
        }
        probe.done = true;
      })();
    }
    await runFor(boundMs, () => probes.every((probe) => probe.done));
    return probes.map(({ topic, partition, writeAfterMs, readAfterMs }) => ({ topic, partition, writeAfterMs, readAfterMs }));
  }

  /** No new calls; those in flight finish within `drainMs` (or stay unanswered). */
  async stop(drainMs: number, runFor: RunFor): Promise<void> {
    this.#producing = false;
    this.#reading = false;
    await runFor(drainMs, () => this.#calls.size === 0);
  }

  #create(engine: Engine, topic: { readonly name: string; readonly partitions: number }, startMs: number): boolean {
    const op = { kind: 'create-topic' as const, client: APP_CLIENT, node: EMBEDDED_NODE_ID, startMs, endMs: startMs, topic: topic.name, partitions: topic.partitions, replicationFactor: 1 };
    try {
      engine.createTopic(topic.name, { partitions: topic.partitions });
    } catch (error) {
      this.#options.record({ ...op, outcome: { ok: false, error: errorName(errorCodeOf(error)), answered: true } });
      return false;
    }
    this.#options.record({ ...op, outcome: { ok: true } });
    return true;
  }

  async #produceLoop(): Promise<void> {
    while (this.#producing) {
      await this.#sleep(PRODUCE_GAP_MS_MIN + this.#random.next() * (PRODUCE_GAP_MS_MAX - PRODUCE_GAP_MS_MIN));
      if (!this.#producing || this.#calls.size >= this.#options.embedded.inFlightMax) continue;
      const { topic, partition } = this.#nextPartition();
      const count = 1 + this.#random.nextInt(BATCH_RECORDS_MAX);
      const values = Array.from({ length: count }, () => `${APP_CLIENT}/${this.#values++}`);
      void this.#produce(APP_CLIENT, topic, partition, values);
    }
  }

  /** The partition of the next call: the current burst's, or a drawn one for a new burst of up to `burstMax` calls. */
  #nextPartition(): { readonly topic: string; readonly partition: number } {
    const partitions = this.#partitions();
    if (this.#burstLeft === 0) {
      this.#burstPartition = this.#random.nextInt(partitions.length);
      this.#burstLeft = 1 + this.#random.nextInt(this.#options.embedded.burstMax);
    }
    this.#burstLeft--;
    return partitions[this.#burstPartition]!;
  }

  /** One produce call with acks 'all', recorded; resolves to its base offset, or null unless acknowledged. Not called while the engine does not serve. */
  async #produce(client: string, topic: string, partition: number, values: readonly string[]): Promise<number | null> {
    const engine = this.#serving();
    if (engine === null) {
      await this.#sleep(NOT_SERVING_WAIT_MS);
      return null;
    }
    const startMs = this.#now();
    const base = { kind: 'produce' as const, client, node: EMBEDDED_NODE_ID, startMs, topic, partition, acks: -1 as const, idempotence: null, values };
    let baseOffset: number | null = null;
    await this.#call(
      () =>
        engine.produce(
          topic,
          values.map((value) => ({ value })),
          { acks: 'all', partition },
        ),
      (produced) => {
        baseOffset = produced[0]!.offset;
        this.#options.record({ ...base, endMs: this.#now(), outcome: { ok: true }, baseOffset } satisfies ProduceOp);
      },
      (outcome) => this.#options.record({ ...base, endMs: this.#now(), outcome, baseOffset: null } satisfies ProduceOp),
    );
    return baseOffset;
  }

  async #readLoop(): Promise<void> {
    while (this.#reading) {
      await this.#sleep(READ_GAP_MS);
      if (!this.#reading) return;
      for (const { topic, partition } of this.#partitions()) await this.#read(APP_CLIENT, topic, partition);
    }
  }

  /** Reads the partition once from where the application got to; returns the records read. */
  async #read(client: string, topic: string, partition: number, from?: number): Promise<readonly ReadRecord[]> {
    const engine = this.#serving();
    if (engine === null) return [];
    const key = `${topic}/${partition}`;
    const fetchOffset = from ?? this.#readFrom.get(key) ?? 0;
    const startMs = this.#now();
    const base = { kind: 'fetch' as const, client, node: EMBEDDED_NODE_ID, startMs, topic, partition, fetchOffset, leaderEpoch: -1 };
    let read: readonly ReadRecord[] = [];
    await this.#call(
      () => engine.fetchWithTier(topic, partition, fetchOffset, { maxBytes: READ_BYTES_MAX }),
      ({ batches, highWatermark }) => {
        let next = fetchOffset;
        const records: ReadRecord[] = [];
        for (const batch of batches) {
          for (const { offset, value } of batchValues(batch)) if (offset >= fetchOffset) records.push({ offset, value });
          next = Math.max(next, batch.nextOffset);
        }
        read = records;
        if (from === undefined) this.#readFrom.set(key, next);
        this.#options.record({ ...base, endMs: this.#now(), outcome: { ok: true }, highWatermark, records } satisfies FetchOp);
      },
      (outcome) => {
        // Below the log start (retention) or past its end: a consumer resets to the earliest offset, as auto.offset.reset=earliest.
        if (from === undefined && !outcome.ok && outcome.error === 'OFFSET_OUT_OF_RANGE') this.#readFrom.set(key, safeLogStart(engine, topic, partition));
        this.#options.record({ ...base, endMs: this.#now(), outcome, highWatermark: null, records: [] } satisfies FetchOp);
      },
    );
    return read;
  }

  /** Reads from `offset` until `value` shows up there; whether it did by `deadlineMs`. */
  async #readBack(topic: string, partition: number, offset: number, value: string, deadlineMs: number): Promise<boolean> {
    while (this.#now() < deadlineMs) {
      const records = await this.#read(`${PROBE_CLIENT}-reader-${topic}-${partition}`, topic, partition, offset);
      if (records.some((record) => record.offset === offset && record.value === value)) return true;
      await this.#sleep(PROBE_RETRY_MS);
    }
    return false;
  }

  /**
   * Runs one call to the engine: `answered` with its result, or `failed` with an outcome: the
   * engine's error as Kafka names it (Closed: the engine closed under it, unanswered), or
   * unanswered when the process exits first or CALL_TIMEOUT_MS passes. Resolves once recorded.
   */
  #call<T>(request: () => Promise<T>, answered: (result: T) => void, failed: (outcome: Outcome) => void): Promise<void> {
    return new Promise((resolve) => {
      const end = (record: () => void) => {
        if (call.finished) return;
        call.finished = true;
        this.#calls.delete(call);
        timer.cancel();
        try {
          record();
        } finally {
          resolve(); // a record that throws (a batch that does not decode) is the run's uncaught error, not a stuck application
        }
      };
      const call: Call = { finished: false, endUnanswered: (error) => end(() => failed({ ok: false, error, answered: false })) };
      const timer = this.#options.scheduler.schedule(CALL_TIMEOUT_MS, () => call.endUnanswered('timeout'));
      this.#calls.add(call);
      let pending: Promise<T>;
      try {
        pending = request();
      } catch (error) {
        pending = Promise.reject(error);
      }
      pending.then(
        (result) => end(() => answered(result)),
        (error: unknown) => end(() => failed(failureOf(error))),
      );
    });
  }

  /** The engine, while its process runs and its open finished (the application calls nothing otherwise). */
  #serving(): Engine | null {
    return this.#options.host.state === 'running' ? this.#options.host.serving : null;
  }

  #partitions(): { readonly topic: string; readonly partition: number }[] {
    return this.#options.topics.flatMap((topic) => Array.from({ length: topic.partitions }, (_, partition) => ({ topic: topic.name, partition })));
  }

  #now(): number {
    return this.#options.scheduler.nowMs;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.scheduler.schedule(ms, resolve));
  }
}

/** An engine call's failure as a request's outcome: the engine closing under it is no answer (as a connection closed), anything else the error Kafka would answer. */
function failureOf(error: unknown): Outcome {
  const name = errorName(errorCodeOf(error));
  const closed = isFerryError(error, 'Closed');
  return { ok: false, error: closed ? 'engine closed' : name, answered: !closed };
}

function safeLogStart(engine: Engine, topic: string, partition: number): number {
  try {
    return engine.logStartOffset(topic, partition);
  } catch {
    return 0;
  }
}
