// What an ACL or a filter must be before the store takes it: Kafka's AclControlManager
// (metadata/src/main/java/org/apache/kafka/controller/AclControlManager.java) validateNewAcl and
// validateFilter, with its messages. Failures are Kafka's INVALID_REQUEST.
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  aclOperationName,
  AclPermissionType,
  aclPermissionTypeName,
  PatternType,
  patternTypeName,
  ResourceType,
  resourceTypeName,
} from './model.ts';

/** Why Kafka's controller refuses this ACL, or null if it takes it. */
export function newAclError(binding: AclBinding): string | null {
  const { pattern, entry } = binding;
  if (pattern.resourceType === ResourceType.UNKNOWN || pattern.resourceType === ResourceType.ANY) {
    return `Invalid resourceType ${resourceTypeName(pattern.resourceType)}`;
  }
  if (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) {
    return `Invalid patternType ${patternTypeName(pattern.patternType)}`;
  }
  if (entry.operation === AclOperation.UNKNOWN || entry.operation === AclOperation.ANY) {
    return `Invalid operation ${aclOperationName(entry.operation)}`;
  }
  if (entry.permissionType !== AclPermissionType.DENY && entry.permissionType !== AclPermissionType.ALLOW) {
    return `Invalid permissionType ${aclPermissionTypeName(entry.permissionType)}`;
  }
  if (pattern.name === '') return 'Resource name should not be empty';
  // Kafka takes any `Type:name` here (an ACL for a type its principal builder never makes matches nothing).
  if (!entry.principal.includes(':')) {
    return `Could not parse principal from \`${entry.principal}\` (no colon is present separating the principal type from the principal name)`;
  }
  return null;
}

/** Why Kafka's controller refuses this DeleteAcls filter (a field it does not know), or null. */
export function filterError(filter: AclBindingFilter): string | null {
  if (filter.pattern.resourceType === ResourceType.UNKNOWN || filter.pattern.patternType === PatternType.UNKNOWN) return 'Unknown patternFilter.';
  if (filter.entry.operation === AclOperation.UNKNOWN || filter.entry.permissionType === AclPermissionType.UNKNOWN) return 'Unknown entryFilter.';
  return null;
}
