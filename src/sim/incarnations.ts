import { type AdminOp, type ClientOp, isAdminOp } from './history.ts';

/**
 * Errors after which a create or delete may still have taken effect: the broker gave up waiting,
 * not the operation. Any other answered error means it did not happen.
 */
const ADMIN_ERRORS_OUTCOME_UNKNOWN: ReadonlySet<string> = new Set(['REQUEST_TIMED_OUT']);
/** A request that never left the client (no connection): surely without effect. */
const NOT_SENT = 'not-sent';

/** Whether a create or delete may have changed the topic: it succeeded, or its outcome is unknown. */
export function mayHaveTakenEffect(op: AdminOp): boolean {
  const outcome = op.outcome;
  return outcome.ok || (!outcome.answered && outcome.error !== NOT_SENT) || ADMIN_ERRORS_OUTCOME_UNKNOWN.has(outcome.error);
}

interface TopicEvents {
  /** The topic's creates and deletes that may have taken effect, by start time. */
  readonly startsMs: number[];
  /** endsMaxMs[i]: the latest end among events 0..i. */
  readonly endsMaxMs: number[];
  /** creates[i]: event i is a create (whatever its outcome). */
  readonly creates: boolean[];
  /** createdOk[i]: event i is a create that succeeded, so the incarnation after it surely exists. */
  readonly createdOk: boolean[];
  /**
   * Spans (sorted, disjoint) in which the topic's incarnation is unknown: from an event whose
   * outcome is unknown to the end of the next one that succeeded. An op in one is attributed to
   * none: had the event not happened, the incarnation after it would be the one before it, and
   * a record read there could be taken for one of another log.
   */
  readonly ambiguous: { readonly fromMs: number; readonly toMs: number }[];
  readonly ambiguousFromMs: number[];
  /** okEndsMs[i]: when event i surely took effect everywhere (its end plus the propagation), or Infinity unless it succeeded. */
  readonly okEndsMs: number[];
}

/** When an incarnation can hold ops (between the events around it), and whether its topic surely exists then. */
export interface IncarnationLife {
  readonly fromMs: number;
  readonly toMs: number;
  /** Incarnation 0 exists unless the topic's first event is a create; a later one only after a create that succeeded. */
  readonly exists: boolean;
}

/**
 * The lives of each topic. A topic deleted and created again is a new log (docs/design.md contract 10),
 * so every op is judged against one incarnation: incarnation k is the time after the k-th create
 * or delete (that may have taken effect) ended and before the next one started. An op that
 * overlaps a create or delete could belong to either side and is attributed to none, and so is an
 * op in a span where an event of unknown outcome leaves the incarnation unknown (until the next
 * event that succeeded): counting an event that did not happen as a boundary would take one log
 * for two, and a record read after it for one of another log.
 */
export class TopicIncarnations {
  readonly #topics = new Map<string, TopicEvents>();

  /** `propagationMs`: how long after an event ends brokers may still act on the topic as it was (an op starting within it overlaps the event). */
  constructor(ops: readonly ClientOp[], propagationMs = 0) {
    const byTopic = new Map<string, AdminOp[]>();
    for (const op of ops) {
      if (!isAdminOp(op) || !mayHaveTakenEffect(op)) continue;
      let list = byTopic.get(op.topic);
      if (list === undefined) byTopic.set(op.topic, (list = []));
      list.push(op);
    }
    for (const [topic, events] of byTopic) {
      events.sort((a, b) => a.startMs - b.startMs);
      const endsMaxMs: number[] = [];
      let max = -Infinity;
      for (const event of events) endsMaxMs.push((max = Math.max(max, event.endMs + propagationMs)));
      const createdOk = events.map((event) => event.kind === 'create-topic' && event.outcome.ok);
      const creates = events.map((event) => event.kind === 'create-topic');
      this.#topics.set(topic, {
        startsMs: events.map((event) => event.startMs),
        endsMaxMs,
        creates,
        createdOk,
        ...spansOf(ambiguousSpans(events, propagationMs)),
        okEndsMs: events.map((event) => (event.outcome.ok ? event.endMs + propagationMs : Infinity)),
      });
    }
  }

  /** The incarnation an op spanning [startMs, endMs] on `topic` belongs to, or null if a create or delete overlaps it. */
  attribute(topic: string, startMs: number, endMs: number): number | null {
    const events = this.#topics.get(topic);
    if (events === undefined) return 0;
    const startedBefore = countAtMost(events.startsMs, endMs);
    if (startedBefore > 0 && events.endsMaxMs[startedBefore - 1]! >= startMs) return null;
    const spansBefore = countAtMost(events.ambiguousFromMs, endMs);
    if (spansBefore > 0 && events.ambiguous[spansBefore - 1]!.toMs >= startMs) return null;
    return startedBefore;
  }

  /** The span of time incarnation `incarnation` of `topic` lives in (unbounded ends are ±Infinity). */
  life(topic: string, incarnation: number): IncarnationLife {
    const events = this.#topics.get(topic);
    if (events === undefined) return { fromMs: -Infinity, toMs: Infinity, exists: true };
    const fromMs = incarnation === 0 ? -Infinity : events.endsMaxMs[incarnation - 1]!;
    const toMs = events.startsMs[incarnation] ?? Infinity;
    const exists = incarnation === 0 ? !events.creates[0] : events.createdOk[incarnation - 1]!;
    return { fromMs, toMs, exists };
  }

  /** Whether incarnation `incarnation` of `topic` may exist: its topic was not created first (incarnation 0), or a create (of any outcome that may have taken effect) began it. */
  mayExist(topic: string, incarnation: number): boolean {
    const events = this.#topics.get(topic);
    if (events === undefined) return true;
    return incarnation === 0 ? !events.creates[0] : events.creates[incarnation - 1] === true;
  }

  /** The earliest incarnation of `topic` an op starting at `ms` may belong to: every event that surely took effect everywhere by then is behind it. */
  earliestAt(topic: string, ms: number): number {
    const events = this.#topics.get(topic);
    return events === undefined ? 0 : countBelow(events.endsMaxMs, ms);
  }

  /** When the create or delete that began incarnation `incarnation` of `topic` started (-Infinity for incarnation 0). */
  beganMs(topic: string, incarnation: number): number {
    return incarnation === 0 ? -Infinity : (this.#topics.get(topic)?.startsMs[incarnation - 1] ?? -Infinity);
  }

  /** By when every broker has surely left incarnation `incarnation` of `topic`: a later event that succeeded has taken effect (Infinity: never). */
  surelyOverMs(topic: string, incarnation: number): number {
    const events = this.#topics.get(topic);
    if (events === undefined) return Infinity;
    let overMs = Infinity;
    for (let i = incarnation; i < events.okEndsMs.length; i++) overMs = Math.min(overMs, events.okEndsMs[i]!);
    return overMs;
  }

  /** The incarnation the run ends in: the one the final replica logs hold. */
  last(topic: string): number {
    return this.#topics.get(topic)?.startsMs.length ?? 0;
  }
}

/** The spans of unknown incarnation of one topic's events (sorted by start): see TopicEvents.ambiguous. */
function ambiguousSpans(events: readonly AdminOp[], propagationMs: number): { fromMs: number; toMs: number }[] {
  const spans: { fromMs: number; toMs: number }[] = [];
  for (let i = 0; i < events.length; i++) {
    if (events[i]!.outcome.ok) continue;
    const fromMs = events[i]!.startMs;
    let toMs = Infinity;
    for (let j = i + 1; j < events.length; j++) {
      if (events[j]!.outcome.ok) {
        toMs = events[j]!.endMs + propagationMs;
        break;
      }
    }
    const last = spans.at(-1);
    if (last !== undefined && fromMs <= last.toMs) last.toMs = Math.max(last.toMs, toMs);
    else spans.push({ fromMs, toMs });
  }
  return spans;
}

function spansOf(ambiguous: { fromMs: number; toMs: number }[]): Pick<TopicEvents, 'ambiguous' | 'ambiguousFromMs'> {
  return { ambiguous, ambiguousFromMs: ambiguous.map((span) => span.fromMs) };
}

/** How many of the ascending `values` are ≤ `limit`. */
export function countAtMost(values: readonly number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= limit) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** How many of the ascending `values` are < `limit`. */
export function countBelow(values: readonly number[], limit: number): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < limit) low = middle + 1;
    else high = middle;
  }
  return low;
}
