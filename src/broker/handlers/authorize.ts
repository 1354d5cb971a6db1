import { type AclOperation, CLUSTER_NAME, ResourceType } from '../../security/acl/model.ts';
import type { AuditFlags } from '../../security/acl/authorizer.ts';
import { ANONYMOUS } from '../../security/principal.ts';
import type { Session } from '../../security/session.ts';
import type { BrokerContext } from '../context.ts';

/**
 * The one question handlers ask of the ACLs: may this session do `operation` on the resource?
 * Without an authorizer (authorizer.class.name unset) everything is allowed, as in Kafka.
 * `flags.logIfDenied: false` for checks that only filter (a topic listed, not asked for by name).
 */
export function allowed(context: Pick<BrokerContext, 'security'>, session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string, flags?: AuditFlags): boolean {
  const authorizer = context.security.authorizer;
  return authorizer === null || authorizer.authorize(session, operation, resourceType, resourceName, flags);
}

/** May this session do `operation` on the cluster (Kafka's single CLUSTER resource, `kafka-cluster`)? */
export function allowedOnCluster(context: Pick<BrokerContext, 'security'>, session: Session, operation: AclOperation, flags?: AuditFlags): boolean {
  return allowed(context, session, operation, ResourceType.CLUSTER, CLUSTER_NAME, flags);
}

/** Kafka's authorizeByResourceType: may the session do `operation` on at least one resource of the type? */
export function allowedOnAnyOf(context: Pick<BrokerContext, 'security'>, session: Session, operation: AclOperation, resourceType: ResourceType): boolean {
  const authorizer = context.security.authorizer;
  return authorizer === null || authorizer.authorizeByResourceType(session, operation, resourceType);
}

/**
 * The session of a request made in-process (tests, embedding code calling a handler): anonymous,
 * so an authorizer denies it whatever it denies an anonymous client.
 */
export const LOCAL_SESSION: Session = Object.freeze({ principal: ANONYMOUS, clientAddress: '', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', saslMechanism: null });
