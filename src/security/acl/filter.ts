// Which ACLs a DescribeAcls or DeleteAcls filter selects: Kafka's ResourcePatternFilter.matches,
// AccessControlEntryFilter.matches and AclBindingFilter.matches (clients/.../common/resource/
// ResourcePatternFilter.java, .../common/acl/AccessControlEntryFilter.java).
import {
  type AccessControlEntry,
  type AccessControlEntryFilter,
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  PatternType,
  type ResourcePattern,
  type ResourcePatternFilter,
  ResourceType,
  WILDCARD_RESOURCE,
} from './model.ts';

/**
 * A pattern filter's match. ANY pattern type: any pattern with exactly this name. MATCH: every
 * pattern that would apply to a resource of this name (the name itself, the literal `*`, every
 * prefix of it). LITERAL or PREFIXED: only that pattern type, exactly this name. A null name
 * matches every name.
 */
export function patternFilterMatches(filter: ResourcePatternFilter, pattern: ResourcePattern): boolean {
  if (filter.resourceType !== ResourceType.ANY && filter.resourceType !== pattern.resourceType) return false;
  const patternType = filter.patternType;
  if (patternType !== PatternType.ANY && patternType !== PatternType.MATCH && patternType !== pattern.patternType) return false;
  if (filter.name === null) return true;
  if (patternType === PatternType.ANY || patternType === pattern.patternType) return filter.name === pattern.name;
  // MATCH against a stored pattern.
  if (pattern.patternType === PatternType.LITERAL) return filter.name === pattern.name || pattern.name === WILDCARD_RESOURCE;
  return filter.name.startsWith(pattern.name);
}

/** Principal and host compare as exact strings (`User:*` matches only the ACLs naming `User:*`). */
export function entryFilterMatches(filter: AccessControlEntryFilter, entry: AccessControlEntry): boolean {
  if (filter.principal !== null && filter.principal !== entry.principal) return false;
  if (filter.host !== null && filter.host !== entry.host) return false;
  if (filter.operation !== AclOperation.ANY && filter.operation !== entry.operation) return false;
  return filter.permissionType === AclPermissionType.ANY || filter.permissionType === entry.permissionType;
}

export function filterMatches(filter: AclBindingFilter, binding: AclBinding): boolean {
  return patternFilterMatches(filter.pattern, binding.pattern) && entryFilterMatches(filter.entry, binding.entry);
}
