/**
 * A reference authorizer written straight from Kafka's documented rules (the ACL section of the
 * Kafka documentation, AclOperation's javadoc on implied operations, Authorizer.java's javadoc of
 * authorizeByResourceType), as a scan of a flat list: no index, no early exits. The tests hold
 * the real Authorizer to it.
 */
import { type AclBinding, AclOperation, AclPermissionType, PatternType, type ResourceType } from '../../../src/security/acl/model.ts';

export interface ReferenceConfig {
  readonly superUsers: readonly string[];
  readonly allowEveryoneIfNoAclFound: boolean;
}

export interface ReferenceQuery {
  readonly principal: string;
  readonly host: string;
  readonly operation: AclOperation;
  readonly resourceType: ResourceType;
  readonly resourceName: string;
}

/** A pattern applies to a name: LITERAL equal or `*`, PREFIXED a prefix of it; case-sensitive. */
export function appliesTo(acl: AclBinding, resourceType: ResourceType, name: string): boolean {
  if (acl.pattern.resourceType !== resourceType) return false;
  if (acl.pattern.patternType === PatternType.LITERAL) return acl.pattern.name === name || acl.pattern.name === '*';
  return name.startsWith(acl.pattern.name);
}

/** The ACL is for this principal (or everyone) connecting from this host (or anywhere). */
export function isFor(acl: AclBinding, principal: string, host: string): boolean {
  return (acl.entry.principal === principal || acl.entry.principal === 'User:*') && (acl.entry.host === '*' || acl.entry.host === host);
}

/** "ALLOW READ/WRITE/DELETE/ALTER implies ALLOW DESCRIBE; ALLOW ALTER_CONFIGS implies ALLOW DESCRIBE_CONFIGS; ALL implies everything." */
export function allowGrants(aclOperation: AclOperation, operation: AclOperation): boolean {
  if (aclOperation === AclOperation.ALL || aclOperation === operation) return true;
  if (operation === AclOperation.DESCRIBE) return [AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER].includes(aclOperation as 3);
  if (operation === AclOperation.DESCRIBE_CONFIGS) return aclOperation === AclOperation.ALTER_CONFIGS;
  return false;
}

/** "DENY ALL implies DENY everything"; a DENY of one operation denies only that one. */
export function denyCovers(aclOperation: AclOperation, operation: AclOperation): boolean {
  return aclOperation === AclOperation.ALL || aclOperation === operation;
}

export function referenceAuthorize(acls: readonly AclBinding[], config: ReferenceConfig, query: ReferenceQuery): boolean {
  if (config.superUsers.includes(query.principal)) return true;
  const onResource = acls.filter((acl) => appliesTo(acl, query.resourceType, query.resourceName));
  const mine = onResource.filter((acl) => isFor(acl, query.principal, query.host));
  const denied = mine.some((acl) => acl.entry.permissionType === AclPermissionType.DENY && denyCovers(acl.entry.operation, query.operation));
  if (denied) return false;
  const allowed = mine.some((acl) => acl.entry.permissionType === AclPermissionType.ALLOW && allowGrants(acl.entry.operation, query.operation));
  if (allowed) return true;
  return onResource.length === 0 && config.allowEveryoneIfNoAclFound;
}

/**
 * Authorizer.java's authorizeByResourceType, as its javadoc and default body describe it: the
 * check on a made-up name first; then, over this principal's and host's ACLs of the type for the
 * operation or ALL (no implied operations): a DENY on `*` denies, an ALLOW on `*` allows, and an
 * ALLOW on a name or prefix allows unless a DENY dominates it (the same literal name, or a DENY
 * prefix that the allowed name starts with).
 */
export function referenceAuthorizeByResourceType(acls: readonly AclBinding[], config: ReferenceConfig, query: Omit<ReferenceQuery, 'resourceName'>): boolean {
  if (referenceAuthorize(acls, config, { ...query, resourceName: 'hardcode' })) return true;
  const relevant = acls.filter((acl) => acl.pattern.resourceType === query.resourceType && isFor(acl, query.principal, query.host) && denyCovers(acl.entry.operation, query.operation));
  const isWildcard = (acl: AclBinding): boolean => acl.pattern.patternType === PatternType.LITERAL && acl.pattern.name === '*';
  const denies = relevant.filter((acl) => acl.entry.permissionType === AclPermissionType.DENY);
  const allows = relevant.filter((acl) => acl.entry.permissionType === AclPermissionType.ALLOW);
  if (denies.some(isWildcard)) return false;
  if (allows.some(isWildcard)) return true;
  return allows.some((allow) => {
    const literal = allow.pattern.patternType === PatternType.LITERAL;
    return !denies.some(
      (deny) =>
        (literal && deny.pattern.patternType === PatternType.LITERAL && deny.pattern.name === allow.pattern.name) ||
        (deny.pattern.patternType === PatternType.PREFIXED && allow.pattern.name.startsWith(deny.pattern.name)),
    );
  });
}
