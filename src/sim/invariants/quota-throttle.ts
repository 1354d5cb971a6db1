import type { Truth } from '../acl-model.ts';
import { healthySinceOf } from '../health-since.ts';
import type { ClientOp, ProduceOp, QuotaChangeOp, SecurityShape, ThrottleOp } from '../history.ts';
import { clockRateErrorMax, type HistoryIndex, onBrokerClocksMs } from '../history-index.ts';
import { ValueLives } from '../value-timeline.ts';
import { viewFloorOf } from '../view-floor.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';

export const QUOTA_THROTTLE = 'quota-throttle';

/** Kafka's quota.window.num and quota.window.size.seconds (Ferry's defaults, which the simulation keeps). */
const WINDOWS = 11;
const WINDOW_MS = 1_000;
/** The rate divides by at least this (Kafka's Rate.windowSize: samples - 1 whole windows), and at most by all the samples. */
const RATE_SPAN_MS_MIN = (WINDOWS - 1) * WINDOW_MS;
const RATE_SPAN_MS_MAX = WINDOWS * WINDOW_MS;
/** Sent over this share above the quota within RATE_SPAN_MS_MIN, a client's rate is surely over it by enough for a throttle of a second or more. */
const OVER_QUOTA_MARGIN = 1.1;
/** A request quota's throttle is at most one window (Kafka's ClientRequestQuotaManager). */
const REQUEST_THROTTLE_MS_MAX = WINDOW_MS;
/** Rounding of the throttle (Math.round). */
const ROUNDING_MS = 1;
const PRODUCER_BYTE_RATE = 'producer_byte_rate';
const CONSUMER_BYTE_RATE = 'consumer_byte_rate';
const REQUEST_PERCENTAGE = 'request_percentage';
/** The quotas that may throttle an answer of each API (every API answers to request_percentage). */
const QUOTA_KEYS_OF: Readonly<Record<string, readonly string[]>> = { Produce: [PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE], Fetch: [CONSUMER_BYTE_RATE, REQUEST_PERCENTAGE] };
const RUN_WIDE: PartitionRef = { topic: '', incarnation: 0, partition: -1 };
/** A request that never left its client: nothing was recorded of it. */
const NOT_SENT = 'not-sent';

/**
 * quota-throttle (issue 25, docs/security.md [A8]): client quotas throttle by Kafka's rule, and the
 * clients honour the throttle (KIP-219). A quota lets the data through, late: what it must not
 * lose or corrupt the data invariants judge. Here:
 * - an answer carries throttle_time_ms only to a user that may have had a quota that applies to
 *   that API at that broker (producer_byte_rate: Produce; consumer_byte_rate: Fetch;
 *   request_percentage: any), as the quotas in force are known within the propagation bound;
 * - a Produce throttle is no longer than the quota's rule gives: Kafka's throttle is
 *   (rate - quota) / quota x W with rate = total / W, W at least 10 windows, so at most
 *   total / quota - 10 windows, where total is at most every byte of the user's produce batches
 *   that may have reached that broker in the last 11 windows (a request quota adds at most a window);
 * - a quota bites: a produce answered by a broker healthy for 11 windows, after the user's batches
 *   answered by it in the 10 windows before (this one's included) came to over 11 windows' worth
 *   of its producer_byte_rate (and a tenth more), carries a throttle;
 * - after an answer with a throttle, the client sends nothing on that connection before the
 *   throttle ends (the broker mutes it meanwhile anyway).
 */
export function checkQuotaThrottle(index: HistoryIndex, out: ViolationList): void {
  const security = index.history.security;
  if (security === undefined) return;
  // The rates run on the brokers' clocks (lease faults make them run fast or slow): their spans in simulated time.
  const spans: RateSpans = { longestMs: onBrokerClocksMs(index.history, RATE_SPAN_MS_MAX), shortestMs: RATE_SPAN_MS_MIN / (1 + clockRateErrorMax(index.history)) };
  const quotas = new QuotaValues(index, security);
  const produces = producesByUserAndNode(index.history.ops, security, spans);
  const healthySince = healthySinceOf(index.history.health);
  const judge: ProduceJudging = { security, quotas, produces, spans, healthyAllAlong: (node, fromMs, toMs) => healthySince(node, toMs) <= fromMs };
  for (const op of index.history.ops) {
    if (op.kind === 'throttle') judgeThrottle(op, security, quotas, out);
    else if (op.kind === 'produce') judgeProduce(op, judge, out);
  }
}

/** A broker's rate windows in simulated time: all its samples span at most `longestMs`; its last 10 windows at least `shortestMs`. */
interface RateSpans {
  readonly longestMs: number;
  readonly shortestMs: number;
}

/** What judging a produce needs. */
interface ProduceJudging {
  readonly security: SecurityShape;
  readonly quotas: QuotaValues;
  readonly produces: ProducesByUserAndNode;
  readonly spans: RateSpans;
  /** Whether the node was healthy over all of [fromMs, toMs] (its process, and so its rates, lived on). */
  readonly healthyAllAlong: (node: number, fromMs: number, toMs: number) => boolean;
}

function judgeThrottle(op: ThrottleOp, security: SecurityShape, quotas: QuotaValues, out: ViolationList): void {
  const user = security.users[op.client];
  if (user === undefined) return;
  if (op.nextSentAfterMs !== null && op.nextSentAfterMs < op.throttleMs) {
    out.add(
      QUOTA_THROTTLE,
      RUN_WIDE,
      'a throttle was not honoured',
      null,
      `${op.client} sent its next request to node ${op.node} ${Math.round(op.nextSentAfterMs)} ms after a ${op.api} answer throttled ${op.throttleMs} ms`,
      op.startMs,
    );
  }
  if (op.api === 'Produce') return; // judged with its ProduceOp
  const keys = QUOTA_KEYS_OF[op.api] ?? [REQUEST_PERCENTAGE];
  if (keys.every((key) => quotas.surelyNone(user, key, op))) {
    out.add(
      QUOTA_THROTTLE,
      RUN_WIDE,
      'throttled without a quota',
      null,
      `${op.client} (User:${user}) was answered a ${op.api} throttled ${op.throttleMs} ms by node ${op.node}, with no ${keys.join(' or ')} of it standing`,
      op.startMs,
    );
  }
}

function judgeProduce(op: ProduceOp, { security, quotas, produces, spans, healthyAllAlong }: ProduceJudging, out: ViolationList): void {
  const user = security.users[op.client];
  if (user === undefined || op.node < 0 || op.batchBytes === undefined) return;
  const throttleMs = op.throttleTimeMs ?? 0;
  const where = { topic: op.topic, incarnation: 0, partition: op.partition };
  const sent = `${op.client} (User:${user}) produce to node ${op.node}`;
  if (throttleMs > 0) {
    if (quotas.surelyNone(user, PRODUCER_BYTE_RATE, op) && quotas.surelyNone(user, REQUEST_PERCENTAGE, op)) {
      out.add(
        QUOTA_THROTTLE,
        where,
        'throttled without a quota',
        null,
        `${sent} was answered throttled ${throttleMs} ms with no ${PRODUCER_BYTE_RATE} or ${REQUEST_PERCENTAGE} of it standing`,
        op.startMs,
      );
    }
    const boundMs = throttleBoundMs(op, user, quotas, produces);
    if (throttleMs > boundMs) {
      out.add(
        QUOTA_THROTTLE,
        where,
        'a throttle longer than the quota gives',
        null,
        `${sent} was answered throttled ${throttleMs} ms; its user's batches to that broker allow at most ${Math.round(boundMs)} ms`,
        op.startMs,
      );
    }
    return;
  }
  const bytesPerSecond = quotas.sure(user, PRODUCER_BYTE_RATE, op, spans.longestMs);
  if (bytesPerSecond === null || op.acks === 0 || (!op.outcome.ok && !op.outcome.answered) || !healthyAllAlong(op.node, op.endMs - spans.longestMs, op.endMs)) return;
  const recorded = produces.recordedBefore(user, op);
  if (recorded <= (RATE_SPAN_MS_MAX / 1000) * bytesPerSecond * OVER_QUOTA_MARGIN) return;
  out.add(
    QUOTA_THROTTLE,
    where,
    'a quota did not bite',
    null,
    `${sent} was answered without a throttle, after ${recorded} bytes of its user's batches were answered by that broker within ${RATE_SPAN_MS_MIN} ms, over ${RATE_SPAN_MS_MAX / 1000} s of its ${bytesPerSecond} B/s ${PRODUCER_BYTE_RATE}`,
    op.startMs,
  );
}

/** The longest produce throttle the quotas in force allow: the smallest producer_byte_rate that may stand, over what may have been recorded. */
function throttleBoundMs(op: ProduceOp, user: string, quotas: QuotaValues, produces: ProducesByUserAndNode): number {
  const rates = [...quotas.possible(user, PRODUCER_BYTE_RATE, op).keys()].filter((value): value is number => value !== null);
  const requestQuota = !quotas.surelyNone(user, REQUEST_PERCENTAGE, op);
  const byteBoundMs = rates.length === 0 ? 0 : (produces.mayHaveRecorded(user, op) / Math.min(...rates)) * 1000 - RATE_SPAN_MS_MIN + ROUNDING_MS;
  return Math.max(byteBoundMs, requestQuota ? REQUEST_THROTTLE_MS_MAX : 0);
}

/** The quotas each user had at each broker, known within the propagation bound (quotas are read again with the ACLs). */
class QuotaValues {
  readonly #lives: ValueLives<number | null>;
  readonly #floorOf: (node: number, atMs: number) => number;

  constructor(index: HistoryIndex, security: SecurityShape) {
    const changes = index.history.ops.filter((op): op is QuotaChangeOp => op.kind === 'alter-quota');
    this.#lives = new ValueLives(
      changes.map((op) => ({ ...op, record: `${op.user}\u0000${op.key}` })),
      null,
    );
    this.#floorOf = viewFloorOf(index.history.health, onBrokerClocksMs(index.history, security.aclPropagationMs));
  }

  /** The values `user`'s `key` may have had at `op`'s broker while it ran (null: no quota), each with whether it surely stood throughout. */
  possible(user: string, key: string, op: ClientOp, beforeMs = 0): Map<number | null, Truth> {
    const fromMs = op.node < 0 ? -Infinity : this.#floorOf(op.node, op.startMs - beforeMs);
    return this.#lives.valuesOver(`${user}\u0000${key}`, fromMs, op.endMs);
  }

  surelyNone(user: string, key: string, op: ClientOp): boolean {
    return this.possible(user, key, op).get(null) === true;
  }

  /** The one value that surely stood over `beforeMs` before `op` and while it ran; null: none did (or no quota). */
  sure(user: string, key: string, op: ClientOp, beforeMs: number): number | null {
    for (const [value, present] of this.possible(user, key, op, beforeMs)) if (present === true) return value;
    return null;
  }
}

type ProducesByUserAndNode = ReturnType<typeof producesByUserAndNode>;

/** Each user's produce requests to each broker, by when they were sent: what a broker's rate of that user may hold. */
function producesByUserAndNode(ops: readonly ClientOp[], security: SecurityShape, spans: RateSpans) {
  const byKey = new Map<string, ProduceOp[]>();
  for (const op of ops) {
    if (op.kind !== 'produce' || op.batchBytes === undefined || op.node < 0 || (!op.outcome.ok && op.outcome.error === NOT_SENT)) continue;
    const user = security.users[op.client];
    if (user === undefined) continue;
    const key = `${user}\u0000${op.node}`;
    let list = byKey.get(key);
    if (list === undefined) byKey.set(key, (list = []));
    list.push(op);
  }
  for (const list of byKey.values()) list.sort((a, b) => a.startMs - b.startMs);
  const listOf = (user: string, op: ProduceOp) => byKey.get(`${user}\u0000${op.node}`) ?? [];
  return {
    /**
     * Bytes of every batch `op`'s broker may have recorded within the samples it judged `op` by (it
     * recorded `op` after it was sent, and the samples span at most RATE_SPAN_MS_MAX before): sent
     * before `op`'s answer, and answered after the samples may have begun, or with no answer seen
     * (a batch without an answer, acks=0 ones too, may be recorded any time after it was sent).
     */
    mayHaveRecorded(user: string, op: ProduceOp): number {
      let bytes = 0;
      for (const other of listOf(user, op)) {
        if (other.startMs > op.endMs) break;
        const answerSeen = other.acks !== 0 && (other.outcome.ok || other.outcome.answered);
        if (!answerSeen || other.endMs >= op.startMs - spans.longestMs) bytes += other.batchBytes!;
      }
      return bytes;
    },
    /** Bytes surely recorded, by `op`'s answer, within the last RATE_SPAN_MS_MIN: its own, and those of batches sent since and answered before it was sent. */
    recordedBefore(user: string, op: ProduceOp): number {
      let bytes = op.batchBytes!;
      for (const other of listOf(user, op)) {
        if (other.startMs > op.startMs) break;
        // An acks=0 batch has no answer: when it was recorded is not known.
        const answered = other.acks !== 0 && (other.outcome.ok || other.outcome.answered);
        if (other === op || !answered || other.startMs < op.endMs - spans.shortestMs || other.endMs > op.startMs) continue;
        bytes += other.batchBytes!;
      }
      return bytes;
    },
  };
}
