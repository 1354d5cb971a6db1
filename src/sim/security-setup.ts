/**
 * A secured run's principals and what they may do (issue 13): the users and their passwords
 * (PLAIN's table, SCRAM credentials in the control records), the brokers' listeners and security
 * options, and the ACLs the admin creates at setup.
 *
 * Who is who:
 * - `broker` and `admin`: super users (the brokers' own principal, and the harness's admin, whose
 *   topic operations and probes must not depend on ACLs);
 * - each producer as itself (`p0`..): WRITE on the topics, and IDEMPOTENT_WRITE on the cluster
 *   when the run draws it (else an idempotent producer lives on KIP-679's WRITE on a topic);
 * - `reader` (partition consumers, late readers): READ on the topics;
 * - `member` (group consumers): READ on the topics and on the group;
 * - `lapsed`: READ and WRITE like the others, for the intruder whose session expires (an answer
 *   after the expiry would be data it may not have any more);
 * - `outsider`: a valid user that no ACL names (the no-acl intruder);
 * - `prober` (the access prober, issue 25): only what the run draws for it (acl-spells.ts).
 */
import type { BrokerOptions } from '../broker/broker.ts';
import type { ListenerConfig } from '../broker/auth/listener-config.ts';
import { ControlStore } from '../control/control-store.ts';
import { AclOperation, aclOperationName, AclPermissionType, CLUSTER_NAME, PatternType, ResourceType } from '../security/acl/model.ts';
import { saltedPasswordOf } from '../security/scram/credential.ts';
import { SCRAM_ITERATIONS_MIN, SCRAM_MECHANISMS } from '../security/scram/mechanism.ts';
import { ScramCredentialStore } from '../security/scram/store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { SeededRandom } from '../util/random.ts';
import type { Deniable } from './acl-spells.ts';
import type { AclChangeOp } from './history.ts';
import type { Scenario } from './scenario.ts';
import type { SecurityScenario } from './security-scenario.ts';

/** The clients' listener: the port the bootstrap addresses name. */
export const CLIENT_LISTENER = 'CLIENT';
/** The brokers' own listener, when the run gives them one. */
export const BROKER_LISTENER = 'BROKER';
export const BROKER_LISTENER_PORT = 9093;
export const BROKER_USER = 'broker';
export const ADMIN_USER = 'admin';
export const READER_USER = 'reader';
export const MEMBER_USER = 'member';
export const LAPSED_USER = 'lapsed';
export const OUTSIDER_USER = 'outsider';
export const PROBER_USER = 'prober';
/** A user no broker knows (the unknown-user intruder). */
export const STRANGER_USER = 'stranger';
export const SUPER_USERS = [BROKER_USER, ADMIN_USER] as const;
/** The group the group consumers form (workload.ts). */
export const SIM_GROUP = 'g0';
/** A prefixed ACL's prefix: every topic of the simulation is named t<n>. */
const TOPIC_PREFIX = 't';
/** Iterations of the SCRAM credentials: Kafka's minimum, the cheapest login (each costs a client this many HMACs). */
const SCRAM_ITERATIONS = SCRAM_ITERATIONS_MIN;
const SALT_BYTES = 16;
const PASSWORD_CHARS = 12;
const PASSWORD_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
/**
 * How long after an ACL change is answered every broker healthy all along applies it: brokers
 * read the ACL records every second (SECURITY_REFRESH_INTERVAL_MS_DEFAULT, after the last read
 * finished), and a read the store failed is tried again a second later.
 */
export const ACL_PROPAGATION_MS = 3_000;

/** A secured run's security as it runs: its scenario and every user's password. */
export interface SimSecurity {
  readonly scenario: SecurityScenario;
  /** Every user a broker knows, with its password (intruders' wrong ones are made up apart). */
  readonly passwords: ReadonlyMap<string, string>;
}

/** Users and passwords, drawn from the security's stream. */
export function simSecurity(scenario: SecurityScenario, producers: readonly string[], random: SeededRandom): SimSecurity {
  const users = [...SUPER_USERS, ...producers, READER_USER, MEMBER_USER, LAPSED_USER, OUTSIDER_USER, PROBER_USER];
  return { scenario, passwords: new Map(users.map((user) => [user, drawPassword(random)])) };
}

export function drawPassword(random: SeededRandom): string {
  let password = '';
  for (let i = 0; i < PASSWORD_CHARS; i++) password += PASSWORD_ALPHABET[random.nextInt(PASSWORD_ALPHABET.length)];
  return password;
}

/** A broker's listeners and security options in a secured run: SASL_PLAINTEXT, an authorizer, progress reports authenticated as `broker`. */
export function brokerSecurityOptions(security: SimSecurity, host: string, clientPort: number): Pick<BrokerOptions, 'listeners' | 'security'> {
  const { scenario, passwords } = security;
  const plainUsers = () => passwords;
  const sasl = (mechanisms: readonly string[]) => ({ mechanisms, plainUsers, reauthMs: scenario.reauthMs });
  const listeners: ListenerConfig[] = [{ name: CLIENT_LISTENER, protocol: 'SASL_PLAINTEXT', host, port: clientPort, sasl: sasl(scenario.mechanisms) }];
  if (scenario.interBrokerListener === 'separate') listeners.push({ name: BROKER_LISTENER, protocol: 'SASL_PLAINTEXT', host, port: BROKER_LISTENER_PORT, sasl: sasl([scenario.interBrokerMechanism]) });
  return {
    listeners,
    security: {
      authorizer: { superUsers: SUPER_USERS.map((user) => `User:${user}`), allowEveryoneIfNoAclFound: false },
      interBroker: {
        listener: scenario.interBrokerListener === 'separate' ? BROKER_LISTENER : CLIENT_LISTENER,
        tls: null,
        sasl: { mechanism: scenario.interBrokerMechanism, username: BROKER_USER, password: passwords.get(BROKER_USER)! },
      },
    },
  };
}

/**
 * Every user's SCRAM credentials (both mechanisms, whichever are enabled) written to the control
 * records before any broker starts, as `ferry users add` would: each broker reads them at its
 * start. Store faults are tried again until every user is in.
 */
export async function writeScramCredentials(store: ObjectStore, security: SimSecurity, random: SeededRandom, retry: () => Promise<void>): Promise<void> {
  const credentials = new ScramCredentialStore(new ControlStore(store, '', { random }));
  for (const mechanism of SCRAM_MECHANISMS) {
    let pending = [...security.passwords].map(([name, password]) => {
      const salt = Uint8Array.from({ length: SALT_BYTES }, () => random.nextInt(256));
      return { name, mechanism: mechanism.type, iterations: SCRAM_ITERATIONS, salt, saltedPassword: saltedPasswordOf(mechanism, password, salt, SCRAM_ITERATIONS) };
    });
    while (pending.length > 0) {
      const results = await credentials.alter([], pending).catch(() => null);
      const failed = new Set(results === null ? pending.map((upsertion) => upsertion.name) : results.filter((result) => result.errorCode !== 0).map((result) => result.user));
      pending = pending.filter((upsertion) => failed.has(upsertion.name));
      if (pending.length > 0) await retry();
    }
  }
}

/** An ACL as the history records it and as CreateAcls and DeleteAcls carry it. */
export type SimAcl = Pick<AclChangeOp, 'principal' | 'resourceType' | 'resourceName' | 'patternType' | 'operation' | 'permission'>;

export function simAcl(
  user: string,
  resourceType: SimAcl['resourceType'],
  resourceName: string,
  operation: AclOperation,
  permission: SimAcl['permission'] = 'allow',
  patternType: SimAcl['patternType'] = 'literal',
): SimAcl {
  return { principal: `User:${user}`, resourceType, resourceName, patternType, operation: aclOperationName(operation), permission };
}

/** An ACL of any principal (`User:*` too), its operation by Kafka's name. */
export function simAclOf(principal: string, resourceType: SimAcl['resourceType'], pattern: Pick<SimAcl, 'resourceName' | 'patternType'>, operation: string, permission: SimAcl['permission']): SimAcl {
  return { principal, resourceType, ...pattern, operation, permission };
}

/** What the legitimate clients' requests need, each user's by resource type: what a spell may deny them (acl-spells.ts). */
export function deniableOf(scenario: Scenario, security: SecurityScenario): Deniable[] {
  const producers = scenario.producers.map((producer) => ({
    user: producer.name,
    operations: { topic: ['WRITE'], ...(producer.idempotent && security.idempotentWriteAcl ? { cluster: ['IDEMPOTENT_WRITE'] } : {}) },
  }));
  const members = scenario.groupConsumers > 0 ? [{ user: MEMBER_USER, operations: { topic: ['READ', 'DESCRIBE'], group: ['READ', 'DESCRIBE'] } }] : [];
  return [...producers, { user: READER_USER, operations: { topic: ['READ', 'DESCRIBE'] } }, ...members];
}

/** The scenario's client quotas, each on its user with its key (producer_byte_rate for a producer, consumer_byte_rate for consumers). */
export function quotasOf(scenario: Scenario, security: SecurityScenario): { user: string; key: string; bytesPerSecond: number }[] {
  const quotas = new Map<string, { user: string; key: string; bytesPerSecond: number }>();
  for (const { holder, index, bytesPerSecond } of security.quotas) {
    if (holder === 'member' && scenario.groupConsumers === 0) continue;
    const user = holder === 'producer' ? scenario.producers[index % scenario.producers.length]!.name : holder === 'reader' ? READER_USER : MEMBER_USER;
    const key = holder === 'producer' ? 'producer_byte_rate' : 'consumer_byte_rate';
    quotas.set(`${user}/${key}`, { user, key, bytesPerSecond }); // the last drawn for a user and key wins
  }
  return [...quotas.values()];
}

/** The ACLs the admin creates at setup: what each legitimate client does, and nothing for `outsider`. */
export function setupAcls(scenario: Scenario, security: SecurityScenario): SimAcl[] {
  const topics = (user: string, operation: AclOperation): SimAcl[] =>
    security.topicPattern === 'prefixed' ? [simAcl(user, 'topic', TOPIC_PREFIX, operation, 'allow', 'prefixed')] : scenario.topics.map((topic) => simAcl(user, 'topic', topic.name, operation));
  const acls: SimAcl[] = [];
  for (const producer of scenario.producers) {
    acls.push(...topics(producer.name, AclOperation.WRITE));
    if (producer.idempotent && security.idempotentWriteAcl) acls.push(simAcl(producer.name, 'cluster', CLUSTER_NAME, AclOperation.IDEMPOTENT_WRITE));
  }
  acls.push(...topics(READER_USER, AclOperation.READ));
  acls.push(...topics(MEMBER_USER, AclOperation.READ), simAcl(MEMBER_USER, 'group', SIM_GROUP, AclOperation.READ));
  acls.push(...topics(LAPSED_USER, AclOperation.READ), ...topics(LAPSED_USER, AclOperation.WRITE), simAcl(LAPSED_USER, 'group', SIM_GROUP, AclOperation.READ));
  return acls;
}

const RESOURCE_TYPES = { topic: ResourceType.TOPIC, group: ResourceType.GROUP, cluster: ResourceType.CLUSTER, 'transactional-id': ResourceType.TRANSACTIONAL_ID } as const;
const PATTERN_TYPES = { literal: PatternType.LITERAL, prefixed: PatternType.PREFIXED } as const;
const PERMISSION_TYPES = { deny: AclPermissionType.DENY, allow: AclPermissionType.ALLOW } as const;
const ANY_HOST = '*';

/** The wire form of an ACL: CreateAcls' creation, and DeleteAcls' filter matching exactly it. */
export function aclOnWire(acl: SimAcl): { resourceType: number; resourceName: string; resourcePatternType: number; principal: string; host: string; operation: number; permissionType: number } {
  const operation = (AclOperation as Record<string, number>)[acl.operation];
  if (operation === undefined) throw new Error(`no ACL operation ${acl.operation}`);
  return {
    resourceType: RESOURCE_TYPES[acl.resourceType],
    resourceName: acl.resourceName,
    resourcePatternType: PATTERN_TYPES[acl.patternType],
    principal: acl.principal,
    host: ANY_HOST,
    operation,
    permissionType: PERMISSION_TYPES[acl.permission],
  };
}
