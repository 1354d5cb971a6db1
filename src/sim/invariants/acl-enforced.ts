import { type AclChangeOp, type ClientOp, isAclChangeOp } from '../history.ts';
import { healthySinceOf } from '../health-since.ts';
import { type HistoryIndex, onBrokerClocksMs } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';
import { AUTHORIZATION_ERRORS } from './intruder-no-data.ts';
import { sightingsOf } from './value-sightings.ts';

export const ACL_ENFORCED = 'acl-enforced';

/** A DENY ACL on one topic for one user, from its first create to the end of the delete that lifted it. */
interface Denial {
  readonly user: string;
  readonly topic: string;
  readonly operation: string;
  /** The first create was sent. */
  readonly fromMs: number;
  /** The first create that succeeded was answered (null: none did; it may still have taken effect). */
  readonly effectiveMs: number | null;
  /** The first delete was sent (it may have taken effect from then on); Infinity: never. */
  readonly liftFromMs: number;
  /** The delete that succeeded was answered; Infinity: none did. */
  readonly toMs: number;
}

/** A request that never left its client: it had no effect. */
const NOT_SENT = 'not-sent';
/** An ACL change answered this may still have taken effect (a control-store write whose answer was lost). */
const OUTCOME_UNKNOWN = 'REQUEST_TIMED_OUT';
/** The operation each legitimate request needs on its topic, where a denial can take it away. */
const OPERATION_OF: Readonly<Partial<Record<ClientOp['kind'], string>>> = { produce: 'WRITE', fetch: 'READ', commit: 'READ' };
/** Requests of legitimate clients whose refusals are judged (they name a topic). */
const JUDGED_KINDS: ReadonlySet<ClientOp['kind']> = new Set(['produce', 'fetch', 'commit', 'list-offsets', 'offset-fetch']);

type TopicOp = Extract<ClientOp, { readonly topic: string; readonly partition: number }>;

/**
 * acl-enforced (issue 13, docs/security.md [A7]): the brokers decide by the ACLs as they stand.
 * While a DENY the admin created stands (from its create's answer and the propagation bound,
 * until its delete was sent), a request of the denied user on that topic that needs the denied
 * operation (WRITE: Produce; READ: Fetch, OffsetCommit), sent to a broker healthy since the bound
 * before it, is refused: never answered ok, and a record every attempt of which was so refused is
 * never read, in a final log or in a WAL object. The other way, a legitimate client's request is
 * refused with an authorization error only where a denial of that user, topic and operation may
 * have stood: from the create's start until the propagation bound after the delete's answer (or
 * after the broker, unhealthy meanwhile, was healthy again: it keeps the ACLs it read last until
 * it reads them again). Super users (the admin, the probes, the brokers) are never refused.
 */
export function checkAclEnforced(index: HistoryIndex, out: ViolationList): void {
  const security = index.history.security;
  if (security === undefined) return;
  const denials = denialsOf(index.history.ops.filter(isAclChangeOp));
  const healthySince = healthySinceOf(index.history.health);
  const superUsers = new Set(security.superUsers);
  const propagationMs = onBrokerClocksMs(index.history, security.aclPropagationMs);
  const refusedEveryTime = new Map<string, boolean>();
  for (const op of index.history.ops) {
    if (!JUDGED_KINDS.has(op.kind)) continue;
    const topicOp = op as TopicOp;
    const user = security.users[op.client];
    if (user === undefined) continue;
    const denial = surelyDenied(topicOp, user, denials, healthySince, propagationMs);
    if (op.kind === 'produce') for (const value of op.values) refusedEveryTime.set(value, (refusedEveryTime.get(value) ?? true) && denial !== null);
    if (denial !== null && op.outcome.ok && !(op.kind === 'produce' && op.acks === 0)) {
      out.add(
        ACL_ENFORCED,
        where(topicOp),
        'a denied request was served',
        null,
        `${op.client} (User:${user}) ${op.kind} to node ${op.node} was answered ok while User:${user} was denied ${denial.operation} on ${denial.topic} (since ${Math.round(denial.effectiveMs!)} ms, propagation ${propagationMs} ms)`,
        op.startMs,
      );
    }
    if (op.outcome.ok || !AUTHORIZATION_ERRORS.has(op.outcome.error)) continue;
    if (!superUsers.has(user) && mayHaveBeenDenied(topicOp, user, denials, healthySince, propagationMs)) continue;
    out.add(
      ACL_ENFORCED,
      where(topicOp),
      'an allowed request was refused',
      null,
      `${op.client} (User:${user}${superUsers.has(user) ? ', a super user' : ''}) ${op.kind} to node ${op.node} was answered ${op.outcome.error} with no denial of it standing`,
      op.startMs,
    );
  }
  const denied = new Set([...refusedEveryTime].filter(([, every]) => every).map(([value]) => value));
  for (const sighting of sightingsOf(index.history, denied)) {
    out.add(
      ACL_ENFORCED,
      { topic: sighting.topic, incarnation: 0, partition: sighting.partition },
      'a denied record became data',
      sighting.offset,
      `"${sighting.value}", every produce of which was sent while its producer was denied WRITE, is ${sighting.where}`,
      sighting.atMs,
    );
  }
}

/** The DENY ACLs' lives, from their creates and deletes in time order (one denial of a user and topic at a time). */
function denialsOf(changes: readonly AclChangeOp[]): Denial[] {
  const denials: Denial[] = [];
  /** Denials a create without an answer may have set: never sure, never lifted. */
  const lingering: Denial[] = [];
  const open = new Map<string, { fromMs: number; effectiveMs: number | null; liftFromMs: number }>();
  for (const op of [...changes].sort((a, b) => a.startMs - b.startMs)) {
    if (op.permission !== 'deny' || op.resourceType !== 'topic' || op.patternType !== 'literal') continue;
    const key = `${op.principal}\u0000${op.resourceName}\u0000${op.operation}`;
    let current = open.get(key);
    if (op.kind === 'create-acl') {
      if (current === undefined) open.set(key, (current = { fromMs: op.startMs, effectiveMs: null, liftFromMs: Infinity }));
      if (op.outcome.ok) current.effectiveMs ??= op.endMs;
      // Sent and never answered: held by a paused broker, it may take effect any time later, after
      // a delete too (seed 30102: created at 27 s by a broker paused since 18 s, after the delete at 25 s).
      // Answered REQUEST_TIMED_OUT (a control-store write whose answer was lost): it may have too.
      if (!op.outcome.ok && ((!op.outcome.answered && op.outcome.error !== NOT_SENT) || op.outcome.error === OUTCOME_UNKNOWN))
        lingering.push({ user: userOf(op.principal), topic: op.resourceName, operation: op.operation, fromMs: op.startMs, effectiveMs: null, liftFromMs: Infinity, toMs: Infinity });
      continue;
    }
    if (current === undefined) continue;
    current.liftFromMs = Math.min(current.liftFromMs, op.startMs);
    if (!op.outcome.ok) continue;
    denials.push({ user: userOf(op.principal), topic: op.resourceName, operation: op.operation, ...current, toMs: op.endMs });
    open.delete(key);
  }
  for (const [key, current] of open) {
    const [principal, topic, operation] = key.split('\u0000') as [string, string, string];
    denials.push({ user: userOf(principal), topic, operation, ...current, toMs: Infinity });
  }
  return [...denials, ...lingering];
}

/** The denial surely in force for all of `op` at its broker, or null. */
function surelyDenied(op: TopicOp, user: string, denials: readonly Denial[], healthySince: (node: number, atMs: number) => number, propagationMs: number): Denial | null {
  const operation = OPERATION_OF[op.kind];
  if (operation === undefined || op.node < 0) return null;
  // Healthy from the bound before the request to its end: the broker read the ACLs since the denial took effect.
  if (healthySince(op.node, op.endMs) > op.startMs - propagationMs) return null;
  return (
    denials.find((d) => d.user === user && d.topic === op.topic && d.operation === operation && d.effectiveMs !== null && op.startMs >= d.effectiveMs + propagationMs && op.endMs <= d.liftFromMs) ??
    null
  );
}

/** Whether a denial of `op`'s user, topic and operation may have stood at its broker while it ran. */
function mayHaveBeenDenied(op: TopicOp, user: string, denials: readonly Denial[], healthySince: (node: number, atMs: number) => number, propagationMs: number): boolean {
  const operation = OPERATION_OF[op.kind];
  if (operation === undefined) return false;
  const since = op.node < 0 ? Infinity : healthySince(op.node, op.startMs);
  return denials.some(
    (d) => d.user === user && d.topic === op.topic && d.operation === operation && d.fromMs <= op.endMs && (since === Infinity || op.startMs <= Math.max(d.toMs, since) + propagationMs),
  );
}

function userOf(principal: string): string {
  return principal.startsWith('User:') ? principal.slice('User:'.length) : principal;
}

function where(op: TopicOp): PartitionRef {
  return { topic: op.topic, incarnation: 0, partition: op.partition };
}
