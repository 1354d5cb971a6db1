import { type NeededCheck, checksOf } from '../access-checks.ts';
import { type AccessCheck, type AclView, type AuthorizerShape, decide, patternMatches, principalMatches, type Truth, type ViewedAcl } from '../acl-model.ts';
import { type AclLife, aclLives } from '../acl-timeline.ts';
import { presenceOver } from '../presence.ts';
import { type ClientOp, isAclChangeOp, type SimResourceType } from '../history.ts';
import { type HistoryIndex, onBrokerClocksMs } from '../history-index.ts';
import { viewFloorOf } from '../view-floor.ts';
import { producersUnderQuota } from '../quota-bound.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';
import { AUTHORIZATION_ERRORS } from './intruder-no-data.ts';
import { sightingsOf } from './value-sightings.ts';

export const ACL_ENFORCED = 'acl-enforced';

/** A request that never left its client: it had no effect. */
const NOT_SENT = 'not-sent';
const RUN_WIDE: PartitionRef = { topic: '', incarnation: 0, partition: -1 };

/**
 * acl-enforced (issues 13 and 25, docs/security.md [A7]): every authorization decision a broker
 * answered agrees with Kafka's rules (acl-model.ts) over the ACLs in force, whatever the operation,
 * resource type (topics, groups, the cluster, transactional ids) and pattern (literal, `*`,
 * prefixed). What each request needs is Kafka's (access-checks.ts); which ACLs were in force is
 * known within bounds: a broker healthy for ACL_PROPAGATION_MS (on its clock) has read the ACL records within it
 * (view-floor.ts), so its decision is judged against every state the records may have held from
 * that floor to the answer (acl-timeline.ts), and only where every such state gives the same
 * decision. So:
 * - a request answered ok (a Produce with acks=0 excepted: it has no answer) was allowed by each
 *   check it needs;
 * - a request refused with an authorization error failed the check that error answers, and
 *   passed the checks made before it (a refusal names the first check that failed); an
 *   authorization error none of its checks answers is wrong whatever the ACLs;
 * - a record every attempt of which was sent while its producer was surely denied WRITE is never
 *   data: never read, in no final log or WAL object.
 * Super users (the admin, the probes, the brokers) are allowed everything.
 */
export function checkAclEnforced(index: HistoryIndex, out: ViolationList): void {
  const security = index.history.security;
  if (security === undefined) return;
  const lives = new LivesByType(aclLives(index.history.ops.filter(isAclChangeOp)));
  const shape: AuthorizerShape = { superUsers: new Set(security.superUsers.map((user) => `User:${user}`)), allowEveryoneIfNoAclFound: security.allowEveryoneIfNoAclFound ?? false };
  // Brokers read the ACLs again on their own clocks, which may run slow (lease faults).
  const floorOf = viewFloorOf(index.history.health, onBrokerClocksMs(index.history, security.aclPropagationMs));
  const refusedEveryTime = new Map<string, boolean>();
  const quotaBound = producersUnderQuota(index.history);
  for (const op of index.history.ops) {
    const checks = checksOf(op);
    const user = security.users[op.client];
    if (checks === null || user === undefined || (!op.outcome.ok && op.outcome.error === NOT_SENT)) continue;
    const principal = `User:${user}`;
    const view = windowView(lives, principal, shape, op.node < 0 ? -Infinity : floorOf(op.node, op.startMs), decidedByMs(op, quotaBound));
    const decisions = checks.map(({ check }) => decide(check, principal, view, shape));
    if (op.kind === 'produce') for (const value of op.values) refusedEveryTime.set(value, (refusedEveryTime.get(value) ?? true) && decisions[0] === false);
    judgeAnswer(op, principal, checks, decisions, view, out);
  }
  const denied = new Set([...refusedEveryTime].filter(([, every]) => every).map(([value]) => value));
  for (const sighting of sightingsOf(index.history, denied)) {
    out.add(
      ACL_ENFORCED,
      { topic: sighting.topic, incarnation: 0, partition: sighting.partition },
      'a denied record became data',
      sighting.offset,
      `"${sighting.value}", every produce of which was sent while its producer was surely denied WRITE, is ${sighting.where}`,
      sighting.atMs,
    );
  }
}

/**
 * The latest a broker may have decided the request: when its answer came. An acks=0 produce has
 * none; of a producer a produce quota may bind, the broker may read it long after it was sent (a
 * throttle mutes the connection, KIP-219): any later moment (sim seed 156, issue 25).
 */
function decidedByMs(op: ClientOp, quotaBound: ReadonlySet<string>): number {
  return op.kind === 'produce' && op.acks === 0 && quotaBound.has(op.client) ? Number.POSITIVE_INFINITY : op.endMs;
}

function judgeAnswer(op: ClientOp, principal: string, checks: readonly NeededCheck[], decisions: readonly Truth[], view: AclView, out: ViolationList): void {
  const sent = `${op.client} (${principal}) ${describeRequest(op)} to node ${op.node}`;
  if (op.outcome.ok) {
    if (op.kind === 'produce' && op.acks === 0) return;
    const failed = decisions.indexOf(false);
    if (failed >= 0) out.add(ACL_ENFORCED, where(op), 'a denied request was served', null, `${sent} was answered ok, yet ${explain(checks[failed]!.check, principal, view)}`, op.startMs);
    return;
  }
  if (!op.outcome.answered || !AUTHORIZATION_ERRORS.has(op.outcome.error)) return;
  const error = op.outcome.error;
  const answering = checks.findIndex((needed) => needed.refusal === error);
  if (answering < 0) {
    out.add(ACL_ENFORCED, where(op), 'refused with an error none of its checks answers', null, `${sent} was answered ${error}; it needs only ${checks.map((c) => c.refusal).join(', ')}`, op.startMs);
    return;
  }
  if (decisions[answering] === true) {
    out.add(ACL_ENFORCED, where(op), 'an allowed request was refused', null, `${sent} was answered ${error}, yet ${explain(checks[answering]!.check, principal, view)}`, op.startMs);
  }
  const earlier = decisions.slice(0, answering).indexOf(false);
  if (earlier >= 0) {
    const first = checks[earlier]!;
    out.add(ACL_ENFORCED, where(op), 'refused with the error of a later check', null, `${sent} was answered ${error}, not ${first.refusal}: ${explain(first.check, principal, view)}`, op.startMs);
  }
}

/** The run's ACLs by resource type, and of each type those that can apply to a principal (its own and `User:*`'s). */
class LivesByType {
  readonly #byType = new Map<SimResourceType, AclLife[]>();
  readonly #byTypeAndPrincipal = new Map<string, AclLife[]>();

  constructor(lives: readonly AclLife[]) {
    for (const life of lives) {
      const list = this.#byType.get(life.acl.resourceType);
      if (list === undefined) this.#byType.set(life.acl.resourceType, [life]);
      else list.push(life);
    }
  }

  of(resourceType: SimResourceType, principal: string | null): readonly AclLife[] {
    const all = this.#byType.get(resourceType) ?? [];
    if (principal === null) return all;
    const key = `${resourceType}\u0000${principal}`;
    let applying = this.#byTypeAndPrincipal.get(key);
    if (applying === undefined) this.#byTypeAndPrincipal.set(key, (applying = all.filter((life) => principalMatches(life.acl, principal))));
    return applying;
  }
}

/**
 * The ACLs a broker may have decided `principal`'s request by: each ACL's presence over [fromMs,
 * toMs]. Only ACLs that can apply to the principal take part (and, under
 * allow.everyone.if.no.acl.found, every ACL, since any names a resource).
 */
function windowView(lives: LivesByType, principal: string, shape: AuthorizerShape, fromMs: number, toMs: number): AclView {
  const byType = new Map<SimResourceType, ViewedAcl[]>();
  return {
    ofType(resourceType) {
      let viewed = byType.get(resourceType);
      if (viewed !== undefined) return viewed;
      viewed = lives.of(resourceType, shape.allowEveryoneIfNoAclFound ? null : principal).map((life) => ({ acl: life.acl, present: presenceOver(life, fromMs, toMs) }));
      byType.set(resourceType, viewed);
      return viewed;
    },
  };
}

/** Why a check came out as it did: the ACLs of the principal that apply to its resource, each `?` if it may or may not have stood. */
function explain(check: AccessCheck, principal: string, view: AclView): string {
  if (check.kind === 'either') return check.checks.map((each) => explain(each, principal, view)).join('; and ');
  const name = check.kind === 'resource' ? check.resourceName : null;
  const acls = view
    .ofType(check.resourceType)
    .filter(({ acl, present }) => present !== false && principalMatches(acl, principal) && (name === null || patternMatches(acl, name)))
    .map(({ acl, present }) => `${acl.permission.toUpperCase()} ${acl.operation} on ${acl.patternType === 'prefixed' ? `${acl.resourceName}*` : acl.resourceName}${present === null ? ' (?)' : ''}`);
  const what = check.kind === 'resource' ? `${check.operation} on ${check.resourceType} ${check.resourceName}` : `${check.operation} on any ${check.resourceType}`;
  return `${what} stood with ${acls.length === 0 ? 'no ACL of it' : acls.join(', ')}`;
}

function describeRequest(op: ClientOp): string {
  if (op.kind === 'access-probe') return `${op.api} of ${op.resourceType} ${op.resourceName}`;
  if ('topic' in op) return `${op.kind} of ${op.topic}${'partition' in op ? `/${op.partition}` : ''}`;
  if ('resourceName' in op) return `${op.kind} of ${op.resourceType} ${op.resourceName}`;
  return op.kind;
}

function where(op: ClientOp): PartitionRef {
  if ('topic' in op && typeof op.topic === 'string') return { topic: op.topic, incarnation: 0, partition: 'partition' in op && typeof op.partition === 'number' ? op.partition : -1 };
  return RUN_WIDE;
}
