// Kafka's ACL model with Kafka's wire codes: clients/src/main/java/org/apache/kafka/common/acl/
// AclOperation.java and AclPermissionType.java, .../common/resource/ResourceType.java and
// PatternType.java (Kafka 4.1). UNKNOWN stands for a code this broker does not know; ANY and MATCH
// appear only in filters (DescribeAcls, DeleteAcls), never in a stored ACL.

export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15, // KIP-939
} as const;
export type AclOperation = (typeof AclOperation)[keyof typeof AclOperation];

export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermissionType = (typeof AclPermissionType)[keyof typeof AclPermissionType];

export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceType = (typeof ResourceType)[keyof typeof ResourceType];

export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternType = (typeof PatternType)[keyof typeof PatternType];

/** The one name of the CLUSTER resource (Kafka's Resource.CLUSTER_NAME). */
export const CLUSTER_NAME = 'kafka-cluster';
/** A LITERAL resource name matching every name of its type (ResourcePattern.WILDCARD_RESOURCE). */
export const WILDCARD_RESOURCE = '*';
/** An ACL host matching every client address. */
export const WILDCARD_HOST = '*';

/** The operations an ACL may name (everything but UNKNOWN and ANY), in code order. */
export const ACL_OPERATIONS: readonly AclOperation[] = Object.values(AclOperation).filter((code) => code >= AclOperation.ALL);
/** The resource types an ACL may name (everything but UNKNOWN and ANY), in code order. */
export const RESOURCE_TYPES: readonly ResourceType[] = Object.values(ResourceType).filter((code) => code >= ResourceType.TOPIC);
/** The pattern types a stored ACL may have. */
export const STORED_PATTERN_TYPES: readonly PatternType[] = [PatternType.LITERAL, PatternType.PREFIXED];

/** Kafka's ResourcePattern: which resources an ACL applies to. */
export interface ResourcePattern {
  readonly resourceType: ResourceType;
  readonly name: string;
  readonly patternType: PatternType;
}

/** Kafka's AccessControlEntry: who may (or may not) do what from where. */
export interface AccessControlEntry {
  /** `Type:name` as the client sent it, `User:*` for everyone. */
  readonly principal: string;
  /** A client IP address as the broker sees it, or `*`. */
  readonly host: string;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}

/** Kafka's AclBinding: one ACL. */
export interface AclBinding {
  readonly pattern: ResourcePattern;
  readonly entry: AccessControlEntry;
}

/** Kafka's ResourcePatternFilter: null name matches every name; ANY/MATCH pattern types are allowed. */
export interface ResourcePatternFilter {
  readonly resourceType: ResourceType;
  readonly name: string | null;
  readonly patternType: PatternType;
}

/** Kafka's AccessControlEntryFilter: null principal and host match everything; ANY operation and permission too. */
export interface AccessControlEntryFilter {
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}

/** Kafka's AclBindingFilter. */
export interface AclBindingFilter {
  readonly pattern: ResourcePatternFilter;
  readonly entry: AccessControlEntryFilter;
}

/** Matches every ACL. */
export const MATCH_ALL_FILTER: AclBindingFilter = Object.freeze({
  pattern: Object.freeze({ resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY }),
  entry: Object.freeze({ principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY }),
});

function fromCode<T extends number>(codes: Readonly<Record<string, T>>): (code: number) => T {
  const known = new Set<number>(Object.values(codes));
  return (code) => (known.has(code) ? (code as T) : (0 as T));
}

/** The operation with this wire code, UNKNOWN for a code Ferry does not know (Kafka's fromCode). */
export const aclOperationFromCode = fromCode<AclOperation>(AclOperation);
export const aclPermissionTypeFromCode = fromCode<AclPermissionType>(AclPermissionType);
export const resourceTypeFromCode = fromCode<ResourceType>(ResourceType);
export const patternTypeFromCode = fromCode<PatternType>(PatternType);

function namesOf(codes: Readonly<Record<string, number>>): readonly string[] {
  const names: string[] = [];
  for (const [name, code] of Object.entries(codes)) names[code] = name;
  return names;
}

const OPERATION_NAMES = namesOf(AclOperation);
const PERMISSION_NAMES = namesOf(AclPermissionType);
const RESOURCE_TYPE_NAMES = namesOf(ResourceType);
const PATTERN_TYPE_NAMES = namesOf(PatternType);

/** Kafka's enum name of a code (`READ`), as its messages and Ferry's ACL records spell it. */
export const aclOperationName = (code: AclOperation): string => OPERATION_NAMES[code] ?? 'UNKNOWN';
export const aclPermissionTypeName = (code: AclPermissionType): string => PERMISSION_NAMES[code] ?? 'UNKNOWN';
export const resourceTypeName = (code: ResourceType): string => RESOURCE_TYPE_NAMES[code] ?? 'UNKNOWN';
export const patternTypeName = (code: PatternType): string => PATTERN_TYPE_NAMES[code] ?? 'UNKNOWN';

function fromName<T extends number>(codes: Readonly<Record<string, T>>): (name: string) => T | null {
  return (name) => (Object.hasOwn(codes, name) ? codes[name]! : null);
}

/** The code of an enum name (`READ`); null if Kafka has no such name. */
export const aclOperationFromName = fromName<AclOperation>(AclOperation);
export const aclPermissionTypeFromName = fromName<AclPermissionType>(AclPermissionType);
export const resourceTypeFromName = fromName<ResourceType>(ResourceType);
export const patternTypeFromName = fromName<PatternType>(PatternType);

export function sameEntry(a: AccessControlEntry, b: AccessControlEntry): boolean {
  return a.principal === b.principal && a.host === b.host && a.operation === b.operation && a.permissionType === b.permissionType;
}

export function samePattern(a: ResourcePattern, b: ResourcePattern): boolean {
  return a.resourceType === b.resourceType && a.patternType === b.patternType && a.name === b.name;
}

/** `(TOPIC, PREFIXED, orders-)`: for messages and logs. */
export function patternText(pattern: ResourcePattern): string {
  return `${resourceTypeName(pattern.resourceType)}:${patternTypeName(pattern.patternType)}:${pattern.name}`;
}

/** `User:alice from * ALLOW READ on TOPIC:LITERAL:orders`: for messages and logs. */
export function bindingText(binding: AclBinding): string {
  const { entry } = binding;
  return `${entry.principal} from ${entry.host} ${aclPermissionTypeName(entry.permissionType)} ${aclOperationName(entry.operation)} on ${patternText(binding.pattern)}`;
}
