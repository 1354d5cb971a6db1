import type { ProduceOp, RunShape } from '../history.ts';
import { producersUnderQuota } from '../quota-bound.ts';
import { type CredentialLapse, credentialLapses, inCredentialLapse } from '../credential-lapses.ts';
import { type HistoryIndex, metadataPropagationMs, onBrokerClocksMs, type PartitionHistory } from '../history-index.ts';
import { ConfigTimeline, MIN_INSYNC_REPLICAS } from '../config-timeline.ts';
import { countBelow } from '../incarnations.ts';
import { type QuorumWindow, quorumWindows, toleratedUnhealthy } from '../quorum-windows.ts';
import { type StrandedSpell, strandedAt, strandedSpells } from '../stranded-spells.ts';
import type { ViolationList } from '../violation.ts';

export const ACKS_RESUME_WITH_QUORUM = 'acks-resume-with-quorum';

/**
 * The resume bound R, from the last disruption to acks=all working again. A leader lost at t is
 * found out when its lease runs out (one lease) and the next scan sees it; the new leader's
 * takeover then seals the old stream and rebuilds (a second lease covers that and a takeover that
 * races a restarting broker's own); a few scans pass between each of these steps. The slack
 * covers what is neither: the client learning the new leader (a metadata refresh after its
 * failed attempt) and its retry backoff, and the WAL upload of the first batch.
 */
export const RESUME_BOUND_LEASES = 2;
export const RESUME_BOUND_SCANS = 3;
export const RESUME_SLACK_MS = 3_000;
/** The failures past R must span at least this long (first start to last end): a burst of quick failures is a blip, a stall this long is not. */
export const DEMAND_SPAN_MIN_MS = 2_000;
/** And be at least this many attempts: evidence that producers kept asking (a client that gave up asks nothing). */
export const STALL_ATTEMPTS_MIN = 3;

/** Errors about the producer's own session, not the partition's availability: the producer resets and goes on. */
const PRODUCER_SESSION_ERRORS: ReadonlySet<string> = new Set(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID', 'INVALID_PRODUCER_EPOCH', 'PRODUCER_FENCED', 'INVALID_PRODUCER_ID_MAPPING']);
/** The ACLs refused the producer (issue 13): about its rights, not the partition's availability (acl-enforced judges these). */
const AUTHORIZATION_ERRORS: ReadonlySet<string> = new Set(['TOPIC_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);
/** The broker holds the batch already and answers for its durability: as good as an acknowledgement. */
const ANSWERED_AS_WRITTEN = 'DUPLICATE_SEQUENCE_NUMBER';

export function resumeBoundMs(shape: RunShape): number {
  return RESUME_BOUND_LEASES * shape.leaseMs + RESUME_BOUND_SCANS * shape.scanIntervalMs + RESUME_SLACK_MS;
}

/**
 * acks-resume-with-quorum: while a min.insync quorum of a partition's replicas is alive (a quorum
 * window, see quorum-windows.ts), acks=all on it works again within the resume bound R of the
 * last disruption. Inside a window, each of these starts the clock again: the window's opening
 * (or the topic's creation, if later), every broker's health change (replica sets are not in the
 * history, so any broker's change may be this partition's leader's), the end of every broker's
 * stranded spell (below) and every acks=all write acknowledged. Between one such moment p and
 * the next q, the partition is in violation if, of the acks=all attempts that started at or
 * after p + R and ended by q, at least STALL_ATTEMPTS_MIN failed (for the partition's sake: not
 * for the producer's session) and they span at least DEMAND_SPAN_MIN_MS, from the first one's
 * start to the last one's end. Attempts that do not exist are not demanded: producers that back
 * off or give up leave nothing to judge. Judged for incarnations whose topic surely exists (see
 * TopicIncarnations.life), from R after the window opened or the topic's create ended,
 * whichever is later.
 *
 * Nor is an attempt of a producer a quota may bind (issue 25: a throttle mutes its connection for
 * seconds; quota-throttle judges those), nor one refused by the ACLs (issue 13: acl-enforced judges those), nor one of a
 * producer whose SCRAM credential was changed or deleted and that has not logged in since
 * (credential-lapses.ts; auth-refused judges those), nor one sent to a broker stranded when it started (StrandedChange: running and
 * reaching the control store, cut from every other host): it keeps its lease, so its leadership,
 * as a Kafka broker that still heartbeats to its controller keeps its own however few clients
 * reach it; neither moves leadership for clients that cannot reach a live leader. Once the spell
 * ends (the cut heals, or the control store is lost too and the lease runs out) the clock starts
 * again.
 *
 * The quorum is the topic's min.insync.replicas, which may change during the run (issue 25): time
 * is cut where what may be in effect changes (config-timeline.ts: an alter's start, its end plus
 * the propagation bound), each piece judged with the greatest value that may hold in it, its start
 * a moment that starts the clock again.
 */
export function checkAcksResumeWithQuorum(index: HistoryIndex, out: ViolationList): void {
  const { shape } = index.history;
  const windowsOf = quorumWindowsByMinInsync(index);
  if (windowsOf(shape.minInsyncReplicas).length === 0 && !altersMinInsync(index)) return;
  const stranded = strandedSpells(index.history.stranded ?? []);
  const strandedEndsMs = [...stranded.values()]
    .flatMap((spells) => spells.map((spell) => spell.toMs))
    .filter(Number.isFinite)
    .sort((a, b) => a - b);
  const piecesOf = minInsyncPieces(index);
  const quotaBound = producersUnderQuota(index.history);
  const lapses = credentialLapses(index.history);
  const boundMs = onBrokerClocksMs(index.history, resumeBoundMs(shape));
  for (const partition of index.partitions) {
    const life = index.incarnations.life(partition.topic, partition.incarnation);
    if (!life.exists) continue;
    const attempts = sortAttempts(partition.produces, stranded, quotaBound, lapses);
    if (attempts.failures.length < STALL_ATTEMPTS_MIN) continue;
    for (const piece of piecesOf(partition.topic)) {
      const context: Context = { boundMs, tolerated: toleratedUnhealthy(shape, piece.minInsync), brokers: shape.brokers, out };
      for (const window of windowsOf(piece.minInsync)) {
        const fromMs = Math.max(window.fromMs, life.fromMs, piece.fromMs);
        const toMs = Math.min(window.toMs, life.toMs, piece.toMs);
        if (toMs - fromMs < context.boundMs + DEMAND_SPAN_MIN_MS) continue;
        const opening: Anchor = { atMs: fromMs, what: openingOf(fromMs, window, life.fromMs) };
        const anchors = anchorsWithin(window, { resumedMs: attempts.resumedMs, strandedEndsMs }, opening, toMs);
        for (let i = 0; i < anchors.length; i++) {
          checkStretch(partition, attempts, anchors[i]!, anchors[i + 1]?.atMs ?? toMs, window, context);
        }
      }
    }
  }
}

function openingOf(fromMs: number, window: QuorumWindow, createdMs: number): string {
  if (fromMs === window.fromMs) return 'the quorum window opened';
  return fromMs === createdMs ? 'the topic was created' : 'min.insync.replicas may have changed';
}

/** A span of time in which one min.insync.replicas (the greatest that may hold then) judges a topic. */
interface MinInsyncPiece {
  readonly fromMs: number;
  readonly toMs: number;
  readonly minInsync: number;
}

function altersMinInsync(index: HistoryIndex): boolean {
  return index.history.ops.some((op) => op.kind === 'alter-configs' && op.configs.some((config) => config.name === MIN_INSYNC_REPLICAS));
}

/** The quorum windows for each min.insync.replicas asked for, computed once each. */
function quorumWindowsByMinInsync(index: HistoryIndex): (minInsync: number) => QuorumWindow[] {
  const { shape, health } = index.history;
  const windows = new Map<number, QuorumWindow[]>();
  return (minInsync) => {
    let found = windows.get(minInsync);
    if (found === undefined) windows.set(minInsync, (found = quorumWindows(shape, health, minInsync)));
    return found;
  };
}

/** Each topic's time cut where its min.insync.replicas may change; a topic never altered is one piece at the broker's value. */
function minInsyncPieces(index: HistoryIndex): (topic: string) => MinInsyncPiece[] {
  const { history } = index;
  const base = history.shape.minInsyncReplicas;
  const propagationMs = metadataPropagationMs(history);
  const pieces = new Map<string, MinInsyncPiece[]>();
  return (topic) => {
    let found = pieces.get(topic);
    if (found !== undefined) return found;
    const timeline = new ConfigTimeline(history.ops, topic, MIN_INSYNC_REPLICAS, String(base), propagationMs);
    const cuts = timeline.constant ? [] : [...new Set(timeline.changesMs())];
    const bounds = [-Infinity, ...cuts, Infinity];
    found = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const fromMs = bounds[i]!;
      const toMs = bounds[i + 1]!;
      const minInsync = timeline.constant ? base : Math.max(...timeline.possibleValues(fromMs, toMs).map(Number));
      found.push({ fromMs, toMs, minInsync: Math.min(minInsync, history.shape.replicationFactor) });
    }
    pieces.set(topic, found);
    return found;
  };
}

interface Context {
  readonly boundMs: number;
  readonly tolerated: number;
  readonly brokers: number;
  readonly out: ViolationList;
}

interface Anchor {
  readonly atMs: number;
  readonly what: string;
}

interface Attempts {
  /** End times of acks=all writes acknowledged, ascending. */
  readonly resumedMs: number[];
  /** Failed acks=all attempts that speak of the partition's availability (not sent to a stranded broker), by start time. */
  readonly failures: ProduceOp[];
  /** failures' start times, for binary search. */
  readonly failureStartsMs: number[];
}

function sortAttempts(
  produces: readonly ProduceOp[],
  stranded: ReadonlyMap<number, readonly StrandedSpell[]>,
  quotaBound: ReadonlySet<string>,
  lapses: ReadonlyMap<string, readonly CredentialLapse[]>,
): Attempts {
  const resumedMs: number[] = [];
  const failures: ProduceOp[] = [];
  for (const op of produces) {
    if (op.acks !== -1) continue;
    const outcome = op.outcome;
    if (outcome.ok || outcome.error === ANSWERED_AS_WRITTEN) resumedMs.push(op.endMs);
    else if (speaksOfThePartition(op, outcome.error, stranded, quotaBound, lapses)) failures.push(op);
  }
  resumedMs.sort((a, b) => a - b);
  failures.sort((a, b) => a.startMs - b.startMs);
  return { resumedMs, failures, failureStartsMs: failures.map((op) => op.startMs) };
}

/** Whether a failed attempt says the partition was unavailable, rather than the producer's session, rights, quota or login. */
function speaksOfThePartition(
  op: ProduceOp,
  error: string,
  stranded: ReadonlyMap<number, readonly StrandedSpell[]>,
  quotaBound: ReadonlySet<string>,
  lapses: ReadonlyMap<string, readonly CredentialLapse[]>,
): boolean {
  if (PRODUCER_SESSION_ERRORS.has(error) || AUTHORIZATION_ERRORS.has(error)) return false;
  return !strandedAt(stranded, op.node, op.startMs) && !quotaBound.has(op.client) && !inCredentialLapse(lapses, op.client, op.startMs);
}

/**
 * The moments inside [opening, toMs) that start the resume clock again, ascending: the opening,
 * the window's health changes, the ends of stranded spells (the stranded broker's lease may run
 * out only from then on) and the acknowledged writes. Same-instant anchors are kept: an empty
 * stretch between them judges nothing.
 */
function anchorsWithin(window: QuorumWindow, clocks: Clocks, opening: Anchor, toMs: number): Anchor[] {
  const inside = (atMs: number) => atMs > opening.atMs && atMs < toMs;
  const later: Anchor[] = [
    ...window.changesMs.filter(inside).map((atMs) => ({ atMs, what: "a broker's health changed" })),
    ...clocks.strandedEndsMs.filter(inside).map((atMs) => ({ atMs, what: 'a broker stopped being stranded' })),
    ...clocks.resumedMs.filter(inside).map((atMs) => ({ atMs, what: 'an acks=all write was acknowledged' })),
  ];
  later.sort((a, b) => a.atMs - b.atMs);
  return [opening, ...later];
}

/** What starts the resume clock again besides the window's own health changes. */
interface Clocks {
  /** End times of acks=all writes acknowledged, ascending. */
  readonly resumedMs: readonly number[];
  /** When some broker stopped being stranded, ascending. */
  readonly strandedEndsMs: readonly number[];
}

/** One stretch (anchor, untilMs]: owed a working acks=all from anchor + R on. */
function checkStretch(partition: PartitionHistory, attempts: Attempts, anchor: Anchor, untilMs: number, window: QuorumWindow, context: Context): void {
  const owedFromMs = anchor.atMs + context.boundMs;
  if (untilMs - owedFromMs < DEMAND_SPAN_MIN_MS) return;
  let count = 0;
  let first: ProduceOp | null = null;
  let lastEndMs = -Infinity;
  // failures started at or after owedFromMs: the first index is how many started before it
  for (let i = countBelow(attempts.failureStartsMs, owedFromMs); i < attempts.failures.length; i++) {
    const op = attempts.failures[i]!;
    if (op.startMs > untilMs) break;
    if (op.endMs > untilMs) continue;
    count++;
    first ??= op;
    lastEndMs = Math.max(lastEndMs, op.endMs);
  }
  if (first === null || count < STALL_ATTEMPTS_MIN || lastEndMs - first.startMs < DEMAND_SPAN_MIN_MS) return;
  const windowMs = window.toMs === Infinity ? 'to the end of the run' : `for ${Math.round(window.toMs - window.fromMs)} ms`;
  const outcome = first.outcome.ok ? 'ok' : first.outcome.answered ? first.outcome.error : `no answer (${first.outcome.error})`;
  const detail =
    `${count} acks=all attempts failed over ${Math.round(lastEndMs - first.startMs)} ms, the first ${Math.round(first.startMs - anchor.atMs)} ms after ${anchor.what} ` +
    `(resume bound ${context.boundMs} ms), while at most ${context.tolerated} of ${context.brokers} brokers were unhealthy (quorum window ${windowMs}); ` +
    `first: ${first.client}->node ${first.node} ${outcome}`;
  context.out.add(ACKS_RESUME_WITH_QUORUM, partition, 'acks=all did not resume with a quorum alive', null, detail, first.startMs);
}
