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
  /** Whether the admin changes ACLs during the chaos (security-load.ts: spells of DENYs, revoked ALLOWs, the access prober's ACLs). */
  readonly aclChanges: boolean;
  /** Whether the admin changes and deletes legitimate users' SCRAM credentials during the chaos (credential-load.ts); only with a SCRAM mechanism enabled. */
  readonly credentialChanges: boolean;
  /** Client quotas the admin sets at setup (issue 25), each on one legitimate user. */
  readonly quotas: readonly QuotaSpec[];
}

/**
 * A byte-rate quota on a legitimate user (`/users/<user>`, shared by all its clients): a producer's
 * producer_byte_rate (the `index`th producer, modulo their count), or the consumer_byte_rate of the
 * partition consumers' user or of the group's.
 */
export interface QuotaSpec {
  readonly holder: 'producer' | 'reader' | 'member';
  readonly index: number;
  /** Bytes per second, per broker (each broker measures its own clients). */
  readonly bytesPerSecond: number;
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
/** Of secured runs, the share whose ACLs change during the chaos (issue 25: most, since each run's spells are few). */
const ACL_CHANGES_SHARE = 0.75;
const CREDENTIAL_CHANGES_SHARE = 0.5;
/** Of secured runs, the share with client quotas, and how many at most (distinct holders not required). */
const QUOTAS_SHARE = 0.5;
const QUOTAS_MAX = 2;
/**
 * Quotas drawn, bytes per second: a producer sends a batch of ~100 bytes every ~65 ms, a few
 * hundred to 1.5 KB/s to each broker, and readers read as much: these bite hard, now and then, or
 * not at all (a throttle is (rate - quota) / quota x the 10-11 s window the rate is over).
 */
const QUOTA_BYTES_PER_SECOND = [300, 1_000, 3_000];
const QUOTA_HOLDERS: readonly QuotaSpec['holder'][] = ['producer', 'producer', 'reader', 'member'];
/** An index drawn below this picks a producer modulo their count. */
const QUOTA_INDEX_SPAN = 12;
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
  const credentialChanges = random.next() < CREDENTIAL_CHANGES_SHARE && mechanisms.some((mechanism) => mechanism !== 'PLAIN');
  const quotas: QuotaSpec[] = [];
  const quotaCount = random.next() < QUOTAS_SHARE ? 1 + random.nextInt(QUOTAS_MAX) : 0;
  for (let i = 0; i < quotaCount; i++) quotas.push({ holder: pick(random, QUOTA_HOLDERS), index: random.nextInt(QUOTA_INDEX_SPAN), bytesPerSecond: pick(random, QUOTA_BYTES_PER_SECOND) });
  return { mechanisms, interBrokerListener, interBrokerMechanism, reauthMs, idempotentWriteAcl, topicPattern, intruders, aclChanges, credentialChanges, quotas };
}

export function describeSecurity(security: SecurityScenario | null): string {
  if (security === null) return '';
  const listener = security.interBrokerListener === 'shared' ? 'the same listener' : 'a listener of their own';
  const reauth = security.reauthMs === 0 ? '' : `, sessions of ${security.reauthMs} ms`;
  const changes = `${security.aclChanges ? ', ACLs changed during the run' : ''}${security.credentialChanges ? ', SCRAM credentials changed during the run' : ''}`;
  const quotas =
    security.quotas.length === 0 ? '' : `, quotas ${security.quotas.map((quota) => `${quota.holder}${quota.holder === 'producer' ? `#${quota.index}` : ''} ${quota.bytesPerSecond} B/s`).join(', ')}`;
  return `; secured: SASL ${security.mechanisms.join('/')}, brokers over ${listener} with ${security.interBrokerMechanism}${reauth}, ${security.topicPattern} topic ACLs${changes}${quotas}; intruders ${security.intruders.join(', ')}`;
}
