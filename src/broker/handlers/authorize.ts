import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/acl/model.ts';
import type { AuditFlags } from '../../security/acl/authorizer.ts';
import { ANONYMOUS } from '../../security/principal.ts';
import type { Session } from '../../security/session.ts';
import type { BrokerContext } from '../context.ts';

// How handlers ask the ACLs, as Kafka's AuthHelper (core/src/main/scala/kafka/server/AuthHelper.scala)
// does for KafkaApis: one check, a filter over names, the by-type check, the authorized-operations
// bit field. Without an authorizer every check allows.

type SecurityOf = Pick<BrokerContext, 'security'>;

/**
 * The one question handlers ask of the ACLs: may this session do `operation` on the resource?
 * Without an authorizer (authorizer.class.name unset) everything is allowed, as in Kafka.
 * `flags.logIfDenied: false` for checks that only filter (a topic listed, not asked for by name).
 */
export function allowed(context: SecurityOf, session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string, flags?: AuditFlags): boolean {
  const authorizer = context.security.authorizer;
  return authorizer === null || authorizer.authorize(session, operation, resourceType, resourceName, flags);
}

/** May this session do `operation` on the cluster (Kafka's single CLUSTER resource, `kafka-cluster`)? */
export function allowedOnCluster(context: SecurityOf, session: Session, operation: AclOperation, flags?: AuditFlags): boolean {
  return allowed(context, session, operation, ResourceType.CLUSTER, CLUSTER_NAME, flags);
}

/** Kafka's authorizeByResourceType: may the session do `operation` on at least one resource of the type? */
export function allowedOnAnyOf(context: SecurityOf, session: Session, operation: AclOperation, resourceType: ResourceType): boolean {
  const authorizer = context.security.authorizer;
  return authorizer === null || authorizer.authorizeByResourceType(session, operation, resourceType);
}

/**
 * Kafka's AuthHelper.filterByAuthorized: the names (each checked once, however often the request
 * repeats it) the session may do `operation` on.
 */
export function allowedNames(context: SecurityOf, session: Session, operation: AclOperation, resourceType: ResourceType, names: Iterable<string>, flags?: AuditFlags): Set<string> {
  const passed = new Set<string>();
  for (const name of new Set(names)) if (allowed(context, session, operation, resourceType, name, flags)) passed.add(name);
  return passed;
}

/**
 * The operations each resource type supports, as Kafka 4.1 reports them (KIP-430; AclEntry.
 * supportedOperations in server/src/main/java/org/apache/kafka/security/authorizer/AclEntry.java).
 */
const SUPPORTED_OPERATIONS: Readonly<Partial<Record<ResourceType, readonly AclOperation[]>>> = {
  [ResourceType.TOPIC]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DESCRIBE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
  ],
  [ResourceType.GROUP]: [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS],
  [ResourceType.CLUSTER]: [
    AclOperation.CREATE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
  ],
  [ResourceType.TRANSACTIONAL_ID]: [AclOperation.DESCRIBE, AclOperation.WRITE],
  [ResourceType.DELEGATION_TOKEN]: [AclOperation.DESCRIBE],
  [ResourceType.USER]: [AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS],
};

/** A bit field of operations, bit n for the operation of code n (Kafka's Utils.to32BitField). */
export function operationBits(operations: Iterable<AclOperation>): number {
  let bits = 0;
  for (const operation of operations) bits |= 1 << operation;
  return bits;
}

/**
 * Kafka's AuthHelper.authorizedOperations (KIP-430): the operations of the resource's type that
 * the session may perform, as a bit field; every supported one without an authorizer. The checks
 * are neither logged allowed nor denied: they only describe.
 */
export function authorizedOperations(context: SecurityOf, session: Session, resourceType: ResourceType, resourceName: string): number {
  const supported = SUPPORTED_OPERATIONS[resourceType] ?? [];
  const quiet = { logIfAllowed: false, logIfDenied: false };
  return operationBits(supported.filter((operation) => allowed(context, session, operation, resourceType, resourceName, quiet)));
}

/** Kafka's default messages (Errors.java) of the authorization errors, which its ApiError carries. */
export const AuthorizationMessage = {
  TOPIC: 'Topic authorization failed.',
  GROUP: 'Group authorization failed.',
  CLUSTER: 'Cluster authorization failed.',
  TRANSACTIONAL_ID: 'Transactional Id authorization failed.',
} as const;

/** "No authorized operations reported" (Kafka's -2^31 default of the *_authorized_operations fields). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/**
 * The session of a request made in-process (tests, embedding code calling a handler): anonymous,
 * so an authorizer denies it whatever it denies an anonymous client.
 */
export const LOCAL_SESSION: Session = Object.freeze({ principal: ANONYMOUS, clientAddress: '', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', saslMechanism: null });
