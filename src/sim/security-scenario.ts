/**
 * How a secured run is secured (issue 13), drawn from a random stream of its own (run.ts salts
 * it), so that a run that is not secured draws everything else as it did before security was in
 * the simulation, and a secured run's other draws are the same as its unsecured twin's.
 *
 * A secured run's brokers listen on SASL_PLAINTEXT (the simulated network has no TLS) with a drawn
 * set of mechanisms, report progress to each other over an authenticated listener (the clients'
 * own, or one of its own) as the super user `broker`, and authorize every request with ACLs.
 */
import type { IntruderKind } from './history.ts';
import type { SeededRandom } from '../util/random.ts';

export const SIM_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SimMechanism = (typeof SIM_MECHANISMS)[number];

export interface SecurityScenario {
  /** sasl.enabled.mechanisms of the clients' listener. */
  readonly mechanisms: readonly SimMechanism[];
  /** Where brokers report progress ([R2]): the clients' listener, or a second SASL listener of their own. */
  readonly interBrokerListener: 'shared' | 'separate';
  /** sasl.mechanism.inter.broker.protocol. */
  readonly interBrokerMechanism: SimMechanism;
  /** connections.max.reauth.ms of every listener (KIP-368); 0: sessions do not end. */
  readonly reauthMs: number;
  /** Idempotent producers get IDEMPOTENT_WRITE on the cluster; else only WRITE on the topics (KIP-679 lets that do). */
  readonly idempotentWriteAcl: boolean;
  /** The legitimate clients' topic ACLs name each topic (literal), or every topic by the prefix `t`. */
  readonly topicPattern: 'literal' | 'prefixed';
  /** The intruders of the run, one client each. */
  readonly intruders: readonly IntruderKind[];
  /** Whether the admin adds DENY ACLs for legitimate clients during the chaos, and removes them again. */
  readonly aclChanges: boolean;
}

/** The share of runs that are secured. */
export const SECURED_SHARE = 0.5;
/** Of secured runs, the share whose sessions expire (short connections.max.reauth.ms). */
const REAUTH_SHARE = 0.25;
/**
 * Session lifetimes drawn: a few seconds, so that a run sees many re-authentications and expiries.
 * Each SCRAM login costs its client 4096 HMACs (~1-2 ms): shorter sessions cost CI time.
 */
const REAUTH_MS_CHOICES = [3_000, 5_000, 10_000];
const SEPARATE_LISTENER_SHARE = 0.5;
const IDEMPOTENT_WRITE_ACL_SHARE = 0.5;
const PREFIXED_SHARE = 0.3;
const ACL_CHANGES_SHARE = 0.5;
/** Intruders whatever the run (expired-session joins them in runs whose sessions expire). */
const INTRUDER_KINDS: readonly IntruderKind[] = ['wrong-password', 'unknown-user', 'bad-mechanism', 'unauthenticated', 'no-acl'];
/** Intruders per run, at least and at most (of INTRUDER_KINDS, distinct). */
const INTRUDERS_MIN = 2;
const INTRUDERS_MAX = 4;

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

/** A secured run's security, or null (drawn first: the rest of the stream is the secured runs'). */
export function drawSecurity(random: SeededRandom): SecurityScenario | null {
  if (random.next() >= SECURED_SHARE) return null;
  const mechanisms = SIM_MECHANISMS.filter(() => random.next() < 0.5);
  if (mechanisms.length === 0) mechanisms.push(pick(random, SIM_MECHANISMS));
  const interBrokerListener = random.next() < SEPARATE_LISTENER_SHARE ? 'separate' : 'shared';
  // A shared listener enables only the clients' mechanisms; a listener of its own enables the one the brokers use.
  const interBrokerMechanism = interBrokerListener === 'shared' ? pick(random, mechanisms) : pick(random, SIM_MECHANISMS);
  const reauthMs = random.next() < REAUTH_SHARE ? pick(random, REAUTH_MS_CHOICES) : 0;
  const idempotentWriteAcl = random.next() < IDEMPOTENT_WRITE_ACL_SHARE;
  const topicPattern = random.next() < PREFIXED_SHARE ? 'prefixed' : 'literal';
  const kinds = [...INTRUDER_KINDS];
  const count = INTRUDERS_MIN + random.nextInt(INTRUDERS_MAX - INTRUDERS_MIN + 1);
  const intruders: IntruderKind[] = [];
  while (intruders.length < count) intruders.push(kinds.splice(random.nextInt(kinds.length), 1)[0]!);
  if (reauthMs > 0) intruders.push('expired-session');
  const aclChanges = random.next() < ACL_CHANGES_SHARE;
  return { mechanisms, interBrokerListener, interBrokerMechanism, reauthMs, idempotentWriteAcl, topicPattern, intruders, aclChanges };
}

export function describeSecurity(security: SecurityScenario | null): string {
  if (security === null) return '';
  const listener = security.interBrokerListener === 'shared' ? 'the same listener' : 'a listener of their own';
  const reauth = security.reauthMs === 0 ? '' : `, sessions of ${security.reauthMs} ms`;
  const changes = security.aclChanges ? ', ACLs changed during the run' : '';
  return `; secured: SASL ${security.mechanisms.join('/')}, brokers over ${listener} with ${security.interBrokerMechanism}${reauth}, ${security.topicPattern} topic ACLs${changes}; intruders ${security.intruders.join(', ')}`;
}
