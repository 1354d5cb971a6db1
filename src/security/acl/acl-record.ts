// How ACLs are kept in the control metadata: one record per resource pattern, as Kafka kept one
// ZooKeeper znode per resource (`/kafka-acl/Topic/orders`, `/kafka-acl-extended/prefixed/...`):
//
//   <control>/security/acls/<resourceType>/<patternType>/<encodeURIComponent(name)>
//   {"version":1,"acls":[{"principal":"User:alice","host":"*","operation":"READ","permissionType":"ALLOW"}]}
//
// Types and operations are spelled by Kafka's enum names, so a record reads without a code table.
// A record whose last ACL was deleted stays, with no ACLs: the store has no conditional delete, and
// an unconditional one could erase an ACL another broker had just added to it.
import { CorruptObjectError } from '../../errors.ts';
import type { ResourceAcls } from './acl-index.ts';
import {
  type AccessControlEntry,
  AclOperation,
  aclOperationFromName,
  aclOperationName,
  AclPermissionType,
  aclPermissionTypeFromName,
  aclPermissionTypeName,
  PatternType,
  patternTypeFromName,
  patternTypeName,
  type ResourcePattern,
  ResourceType,
  resourceTypeFromName,
  resourceTypeName,
} from './model.ts';

/** Where the ACL records live, relative to the control root. */
export const ACL_RECORDS_PREFIX = 'security/acls/';
export const ACL_RECORD_VERSION = 1;
/**
 * The longest encoded resource name a record key may carry. S3 keys end at 1024 bytes; this leaves
 * 256 for the bucket prefix, the control root and `security/acls/<type>/<pattern>/`. A longer name
 * (an encoded character takes up to 12) is refused as an invalid request rather than failing in the store.
 */
export const ACL_RECORD_NAME_KEY_CHARS_MAX = 768;

interface StoredEntry {
  readonly principal: string;
  readonly host: string;
  readonly operation: string;
  readonly permissionType: string;
}

/** One record's JSON. */
export interface AclRecord {
  readonly version: number;
  readonly acls: readonly StoredEntry[];
}

/** The record key (relative to ACL_RECORDS_PREFIX) of a resource pattern. */
export function aclRecordKey(pattern: ResourcePattern): string {
  return `${resourceTypeName(pattern.resourceType)}/${patternTypeName(pattern.patternType)}/${encodeURIComponent(pattern.name)}`;
}

/** Why a resource name cannot be a record key (too long), or null. */
export function recordKeyError(pattern: ResourcePattern): string | null {
  const length = encodeURIComponent(pattern.name).length;
  if (length <= ACL_RECORD_NAME_KEY_CHARS_MAX) return null;
  return `Resource name too long: encoded for Ferry's ACL record key it takes ${length} characters, more than ${ACL_RECORD_NAME_KEY_CHARS_MAX}`;
}

export function encodeAclRecord(entries: readonly AccessControlEntry[]): AclRecord {
  return {
    version: ACL_RECORD_VERSION,
    acls: entries.map((entry) => ({
      principal: entry.principal,
      host: entry.host,
      operation: aclOperationName(entry.operation),
      permissionType: aclPermissionTypeName(entry.permissionType),
    })),
  };
}

/** Reads a record back, checking every field; a record Ferry could not have written is CorruptObject. */
export function decodeAclRecord(key: string, record: unknown): ResourceAcls {
  const pattern = patternOfKey(key);
  const value = record as Partial<AclRecord> | null;
  if (typeof value !== 'object' || value === null || value.version !== ACL_RECORD_VERSION || !Array.isArray(value.acls)) {
    throw corrupt(key, 'not a version 1 ACL record');
  }
  return { pattern, entries: value.acls.map((stored: unknown) => decodeEntry(key, stored)) };
}

function patternOfKey(key: string): ResourcePattern {
  const parts = key.split('/');
  if (parts.length !== 3) throw corrupt(key, 'the key is not <resourceType>/<patternType>/<name>');
  const resourceType = resourceTypeFromName(parts[0]!);
  const patternType = patternTypeFromName(parts[1]!);
  if (resourceType === null || resourceType === ResourceType.ANY || resourceType === ResourceType.UNKNOWN) throw corrupt(key, `no resource type ${parts[0]}`);
  if (patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED) throw corrupt(key, `no stored pattern type ${parts[1]}`);
  let name: string;
  try {
    name = decodeURIComponent(parts[2]!);
  } catch {
    throw corrupt(key, 'the name is not URI-encoded');
  }
  if (name === '') throw corrupt(key, 'an empty resource name');
  return { resourceType, patternType, name };
}

function decodeEntry(key: string, stored: unknown): AccessControlEntry {
  const value = stored as Partial<StoredEntry> | null;
  if (typeof value !== 'object' || value === null || typeof value.principal !== 'string' || typeof value.host !== 'string') throw corrupt(key, 'an ACL without principal and host');
  const operation = aclOperationFromName(String(value.operation));
  const permissionType = aclPermissionTypeFromName(String(value.permissionType));
  if (operation === null || operation === AclOperation.ANY || operation === AclOperation.UNKNOWN) throw corrupt(key, `no operation ${value.operation}`);
  if (permissionType !== AclPermissionType.ALLOW && permissionType !== AclPermissionType.DENY) throw corrupt(key, `no permission type ${value.permissionType}`);
  return { principal: value.principal, host: value.host, operation, permissionType };
}

function corrupt(key: string, detail: string): CorruptObjectError {
  return new CorruptObjectError('acl record', 0, detail, `ACL record ${ACL_RECORDS_PREFIX}${key}`);
}
