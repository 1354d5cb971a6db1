import type { FetchOp, History, ProduceOp, ReadRecord } from './history.ts';
import type { TopicIncarnations } from './incarnations.ts';

/** A value sent to more than one incarnation (a retry across a re-create), or to one unknown: placing by it is unsure. */
const SEVERAL_INCARNATIONS = -1;

/**
 * Whether a produce's records may have been written after it ended in the history: an acks=0
 * request is over once sent, and one never answered may still be held by its broker (a throttle's
 * mute, a pause, a slow disk) and written seconds later (seed 220060: an acks=0 batch sent while
 * its topic was deleted was written into the incarnation created 9 s later).
 */
function mayLandLater(op: ProduceOp): boolean {
  return op.acks === 0 || (!op.outcome.ok && !op.outcome.answered);
}

/** An attempt that may have landed after it ended: sent to `incarnation` (null: to none known) at `startMs`. */
interface LateAttempt {
  readonly incarnation: number | null;
  readonly startMs: number;
}

/** Where one value was sent. */
interface ValueSends {
  readonly topic: string;
  readonly partition: number;
  /** The incarnation of every attempt, or SEVERAL_INCARNATIONS. */
  sentIn: number;
  /** The incarnation of every answered attempt (their records landed within their spans, if at all), or SEVERAL_INCARNATIONS; undefined: none answered. */
  surelyIn: number | undefined;
  readonly late: LateAttempt[];
}

/**
 * Which incarnation of its topic a read (a fetch that returned records) was served from. A read
 * is placed by the incarnation its records were produced in, not by its time: a broker that has
 * not yet seen a delete or create serves the log it has, whenever the read comes. In order:
 * - P1 by the first of its records whose value's answered attempts all went to one incarnation s,
 *   unless an attempt of that value that may have landed later (acks=0, unanswered) could have put
 *   it in another incarnation by the time the read ended (seed 260114: refused in the deleted
 *   incarnation, sent again unanswered to the re-created one and written there);
 * - P2 else by its first record's value, if all its attempts went to one incarnation k and none
 *   that may have landed later could have put it in another by then (seed 272961: acks=0 batches
 *   held by a quota's mute, written 10 s later into the re-created incarnation);
 * - P3 else, with no records, by its own time; otherwise it is not placed (not judged).
 * A late attempt sent to k (or, sent across a create or delete, to the earliest incarnation it may
 * belong to) may land in k or in any later incarnation that may exist and began before the read
 * ended, unless that incarnation surely holds another value at the offset the read returned it
 * at: an acks=all acknowledgement there says so, and so does the final leader log of the last
 * incarnation, from its start on (committed records are never taken back; a stale read of the
 * value is still judged: test/sim/late-landing-stale-read.test.ts). An attempt sent after the read
 * ended is not where its records came from.
 */
export class ReadPlacement {
  readonly #incarnations: TopicIncarnations;
  readonly #values = new Map<string, ValueSends>();
  /** `topic/incarnation/partition` -> offset -> the value an acks=all acknowledgement put there. */
  readonly #acknowledged = new Map<string, Map<number, string>>();
  /** `topic/partition` -> the final leader log (tier included): where it starts, and its values by offset. */
  readonly #finalLogs = new Map<string, { readonly startOffset: number; readonly valueAt: Map<number, string> }>();

  constructor(history: History, incarnations: TopicIncarnations) {
    this.#incarnations = incarnations;
    for (const op of history.ops) if (op.kind === 'produce') this.#noteSend(op);
    for (const log of history.replicaLogs) {
      if (!log.leader) continue;
      const valueAt = new Map(log.records.map((record) => [record.offset, record.value]));
      this.#finalLogs.set(`${log.topic}/${log.partition}`, { startOffset: log.clientStartOffset ?? log.logStartOffset, valueAt });
    }
    for (const tier of history.tiered ?? []) {
      const valueAt = this.#finalLogs.get(`${tier.topic}/${tier.partition}`)?.valueAt;
      for (const segment of tier.segments) {
        if (segment.counted && segment.problem === null) for (const record of segment.records) valueAt?.set(record.offset, record.value);
      }
    }
  }

  /** The incarnation `read` was served from, or null if it cannot be told. */
  incarnationOf(read: FetchOp): number | null {
    for (const record of read.records) {
      const sends = this.#values.get(record.value);
      const sure = sends?.surelyIn;
      if (sends !== undefined && sure !== undefined && sure !== SEVERAL_INCARNATIONS && this.#onlyIn(read, record, sends, sure)) return sure; // P1
    }
    const first = read.records[0];
    const sends = first === undefined ? undefined : this.#values.get(first.value);
    if (sends === undefined) return this.#incarnations.attribute(read.topic, read.startMs, read.endMs); // P3: nothing to place it by
    if (sends.sentIn === SEVERAL_INCARNATIONS) return null;
    return this.#onlyIn(read, first!, sends, sends.sentIn) ? sends.sentIn : null; // P2
  }

  #noteSend(op: ProduceOp): void {
    const incarnation = this.#incarnations.attribute(op.topic, op.startMs, op.endMs);
    const known = incarnation ?? SEVERAL_INCARNATIONS;
    for (const value of op.values) {
      let sends = this.#values.get(value);
      if (sends === undefined) this.#values.set(value, (sends = { topic: op.topic, partition: op.partition, sentIn: known, surelyIn: undefined, late: [] }));
      else if (sends.sentIn !== known) sends.sentIn = SEVERAL_INCARNATIONS;
      if (mayLandLater(op)) sends.late.push({ incarnation, startMs: op.startMs });
      else sends.surelyIn = sends.surelyIn === undefined || sends.surelyIn === known ? known : SEVERAL_INCARNATIONS;
    }
    if (incarnation === null || op.acks !== -1 || !op.outcome.ok || op.baseOffset === null) return;
    const key = `${op.topic}/${incarnation}/${op.partition}`;
    const offsets = this.#acknowledged.get(key) ?? new Map<number, string>();
    op.values.forEach((value, i) => offsets.set(op.baseOffset! + i, value));
    this.#acknowledged.set(key, offsets);
  }

  /** Whether every late attempt of the record's value sent before `read` ended could only have landed in `incarnation` by then. */
  #onlyIn(read: FetchOp, record: ReadRecord, sends: ValueSends, incarnation: number): boolean {
    for (const attempt of sends.late) {
      if (attempt.startMs > read.endMs) continue;
      const from = attempt.incarnation ?? this.#incarnations.earliestAt(sends.topic, attempt.startMs);
      for (let landing = from; landing <= this.#incarnations.last(sends.topic); landing++) {
        if (landing !== incarnation && this.#mayHoldLate(read, record, sends, landing)) return false;
      }
    }
    return true;
  }

  /** Whether a late attempt's value may be at the record's offset in incarnation `landing` when `read` ended. */
  #mayHoldLate(read: FetchOp, record: ReadRecord, sends: ValueSends, landing: number): boolean {
    const { topic, partition } = sends;
    const incarnations = this.#incarnations;
    if (!incarnations.mayExist(topic, landing) || incarnations.beganMs(topic, landing) > read.endMs) return false;
    const acknowledged = this.#acknowledged.get(`${topic}/${landing}/${partition}`)?.get(record.offset);
    if (acknowledged !== undefined && acknowledged !== record.value) return false;
    const final = landing === incarnations.last(topic) ? this.#finalLogs.get(`${topic}/${partition}`) : undefined;
    return final === undefined || record.offset < final.startOffset || final.valueAt.get(record.offset) === record.value;
  }
}
