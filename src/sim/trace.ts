import { type ClientOp, type FaultEvent, type History, isAclChangeOp, isGroupOp, isPartitionOp } from './history.ts';
import { COMMIT_CURRENT_GENERATION } from './invariants/commit-current-generation.ts';
import { COMMITS_MONOTONIC } from './invariants/commits-monotonic.ts';
import { FETCHED_OFFSET_COMMITTED } from './invariants/fetched-offset-committed.ts';
import type { Violation } from './violation.ts';

/** Lines of trace printed with a violation: the events nearest it, enough to see what led there. */
export const TRACE_LINES_MAX = 20;
/** Invariants over a group's offsets: their traces show the group's membership requests too (joins, syncs, heartbeats, leaves). */
const GROUP_INVARIANTS: ReadonlySet<string> = new Set([COMMITS_MONOTONIC, COMMIT_CURRENT_GENERATION, FETCHED_OFFSET_COMMITTED]);
/** Of those, how many may be ops that touch the violation's offsets far from its time. */
const TRACE_MARKED_MAX = 5;

type TraceEvent = { readonly atMs: number; readonly op: ClientOp } | { readonly atMs: number; readonly fault: FaultEvent };

/**
 * A violation as a reader wants it: the seed to replay, the invariant, the partition and offsets,
 * what was seen, and the ops and faults on that partition nearest the violation, with simulated
 * times relative to the run's start. Ops touching the violation's offsets are marked `*`.
 */
export function formatViolation(violation: Violation, history: History): string {
  const startMs = runStartMs(history);
  const incarnation = violation.incarnation === undefined ? '' : ` (incarnation ${violation.incarnation})`;
  const offsets = violation.offsets.length === 0 ? '' : `, offset${violation.offsets.length > 1 ? 's' : ''} ${violation.offsets.join(', ')}`;
  const when = violation.atMs === undefined ? '' : `, at ${relative(violation.atMs, startMs)}`;
  const lines = [
    `seed ${history.seed}: ${violation.invariant} violated on topic ${violation.topic} partition ${violation.partition}${incarnation}${offsets}${when}`,
    `  ${violation.message}`,
    `  replay: --seed ${history.seed}`,
    `  trace (ops on ${violation.topic}/${violation.partition} and every fault; * marks ops on those offsets; times from the run's start):`,
  ];
  for (const event of traceWindow(violation, history)) lines.push(`    ${describe(event, violation, startMs)}`);
  return lines.join('\n');
}

/** When the run started: History.startMs if the harness set it, else its earliest event. */
function runStartMs(history: History): number {
  if (history.startMs !== undefined) return history.startMs;
  let earliest = history.quietFromMs;
  for (const op of history.ops) earliest = Math.min(earliest, op.startMs);
  for (const fault of history.faults) earliest = Math.min(earliest, fault.atMs);
  return earliest;
}

/**
 * The events printed: the first few that touch the violation's offsets (wherever they lie: the
 * other side of a conflict may be long before), then the nearest to the violation's time.
 */
function traceWindow(violation: Violation, history: History): TraceEvent[] {
  const events: TraceEvent[] = [];
  for (const op of history.ops) if (touchesPartition(op, violation)) events.push({ atMs: op.startMs, op });
  for (const fault of history.faults) events.push({ atMs: fault.atMs, fault });
  events.sort((a, b) => a.atMs - b.atMs);
  const chosen = new Set<TraceEvent>();
  for (const event of events) {
    if (chosen.size >= TRACE_MARKED_MAX) break;
    if ('op' in event && touchesOffsets(event.op, violation.offsets)) chosen.add(event);
  }
  const centreMs = violation.atMs ?? Infinity;
  let centre = events.findIndex((event) => event.atMs >= centreMs);
  if (centre === -1) centre = events.length;
  const room = TRACE_LINES_MAX - chosen.size;
  const first = Math.max(0, Math.min(centre - Math.ceil(room / 2), events.length - TRACE_LINES_MAX));
  for (let i = first; i < events.length && chosen.size < TRACE_LINES_MAX; i++) chosen.add(events[i]!);
  return events.filter((event) => chosen.has(event));
}

function touchesPartition(op: ClientOp, violation: Violation): boolean {
  if (isAclChangeOp(op)) return violation.topic === '' || op.resourceName === violation.topic;
  if (op.kind === 'metadata') return op.topics.some((topic) => topic.name === violation.topic);
  // A run-wide violation (no topic: the security paths, answer-allowed of a group API) shows the ops of no topic around it.
  if (op.kind === 'authenticate' || op.kind === 'request') return violation.topic === '';
  if (op.kind === 'intruder') return violation.topic === '' || (op.topic === violation.topic && (op.partition === null || op.partition === violation.partition));
  if (isGroupOp(op)) return GROUP_INVARIANTS.has(violation.invariant);
  if (op.topic !== violation.topic) return false;
  return !isPartitionOp(op) || op.partition === violation.partition;
}

function touchesOffsets(op: ClientOp, offsets: readonly number[]): boolean {
  if (op.kind === 'produce') return op.baseOffset !== null && offsets.some((offset) => offset >= op.baseOffset! && offset < op.baseOffset! + op.values.length);
  if (op.kind === 'fetch') return op.records.some((record) => offsets.includes(record.offset));
  if (op.kind === 'commit' || op.kind === 'offset-fetch') return offsets.includes(op.offset);
  if (op.kind === 'list-offsets') return op.offset !== null && offsets.includes(op.offset);
  if (op.kind === 'delete-records') return op.lowWatermark !== null && offsets.includes(op.lowWatermark);
  return false;
}

function describe(event: TraceEvent, violation: Violation, startMs: number): string {
  if ('fault' in event) return `  ${relative(event.atMs, startMs)}  fault ${event.fault.fault} ${event.fault.target}`;
  const op = event.op;
  const mark = touchesOffsets(op, violation.offsets) ? '*' : ' ';
  const span = `${relative(op.startMs, startMs)}..${relative(op.endMs, startMs)}`;
  return `${mark} ${span}  ${op.client}->node ${op.node} ${describeOp(op)}: ${describeOutcome(op)}`;
}

function describeOp(op: ClientOp): string {
  switch (op.kind) {
    case 'produce': {
      const sequence = op.idempotence === null ? '' : ` pid ${op.idempotence.producerId}/${op.idempotence.producerEpoch} seq ${op.idempotence.baseSequence}`;
      const at = op.baseOffset === null ? '' : ` -> ${op.baseOffset}..${op.baseOffset + op.values.length - 1}`;
      return `produce acks=${op.acks}${sequence} ${op.values.length} record(s) ${op.values[0] ?? ''}${at}`;
    }
    case 'fetch': {
      const first = op.records[0];
      const range = first === undefined ? 'none' : `${first.offset}..${op.records.at(-1)!.offset}`;
      return `fetch from ${op.fetchOffset} at epoch ${op.leaderEpoch}: records ${range}, hw ${op.highWatermark ?? '-'}`;
    }
    case 'commit':
      return `commit ${op.group} offset ${op.offset}${op.reset ? ' (reset)' : ''} as ${op.memberId || '-'} gen ${op.generationId}`;
    case 'join-group': {
      const generation = op.generationId < 0 ? '' : ` -> ${op.memberId} gen ${op.generationId}, leader ${op.leader}${op.members.length === 0 ? '' : ` of ${op.members.join(',')}`}`;
      return `join-group ${op.group} as ${op.askedMemberId || '(new)'}${generation}`;
    }
    case 'sync-group':
    case 'heartbeat':
    case 'leave-group':
      return `${op.kind} ${op.group} as ${op.memberId}${op.kind === 'leave-group' ? '' : ` gen ${op.generationId}`}`;
    case 'offset-fetch':
      return `offset-fetch ${op.group} -> ${op.offset}`;
    case 'delete-records':
      return `delete-records before ${op.offset}${op.lowWatermark === null ? '' : ` -> low watermark ${op.lowWatermark}`}`;
    case 'list-offsets':
      return `list-offsets at ${op.timestamp} -> ${op.offset ?? '-'}`;
    case 'create-partitions':
      return `create-partitions ${op.topic} to ${op.count}`;
    case 'alter-configs':
      return `alter-configs ${op.topic} ${op.configs.map((config) => `${config.name}=${config.value ?? '(default)'}`).join(', ')}`;
    case 'metadata':
      return `metadata ${op.topics.map((topic) => `${topic.name}:${topic.partitions}`).join(' ')}`;
    case 'authenticate':
      return `${op.reauthentication ? 're-authenticate' : 'authenticate'} ${op.mechanism} (SaslHandshake v${op.handshakeVersion})${op.sessionLifetimeMs > 0 ? `, session ${op.sessionLifetimeMs} ms` : ''}`;
    case 'create-acl':
    case 'delete-acl':
      return `${op.kind} ${op.permission} ${op.principal} ${op.operation} on ${op.resourceType} ${op.resourceName}${op.patternType === 'prefixed' ? '*' : ''}`;
    case 'request':
      return `${op.api}${op.group === null ? '' : ` ${op.group}`}`;
    case 'intruder': {
      const what = [
        op.topic === null ? '' : `${op.topic}${op.partition === null ? '' : `/${op.partition}`}`,
        op.group ?? '',
        op.values.length === 0 ? '' : `${op.values.length} record(s) ${op.values[0]}`,
        op.committedOffset === null ? '' : `offset ${op.committedOffset}`,
      ]
        .filter((part) => part !== '')
        .join(' ');
      const got = [
        op.records.length === 0 ? '' : `${op.records.length} record(s)`,
        op.topics.length === 0 ? '' : `topics ${op.topics.join(',')}`,
        op.offsets.length === 0 ? '' : `offsets ${op.offsets.join(',')}`,
      ]
        .filter((part) => part !== '')
        .join(', ');
      return `intruder (${op.intruder}) ${op.api} on ${op.listener}${what === '' ? '' : ` ${what}`}${got === '' ? '' : ` -> ${got}`}`;
    }
    default:
      return `${op.kind} ${op.topic} (${op.partitions} partitions, rf ${op.replicationFactor})`;
  }
}

function describeOutcome(op: ClientOp): string {
  const outcome = op.outcome;
  if (outcome.ok) return 'ok';
  return outcome.answered ? outcome.error : `no answer (${outcome.error})`;
}

function relative(atMs: number, startMs: number): string {
  return `+${((atMs - startMs) / 1000).toFixed(3)}s`;
}
