// Kafka's authorization: the ACL model, the authorizer's decisions, and the ACLs kept in the control metadata.
export * from './model.ts';
export { entryFilterMatches, filterMatches, patternFilterMatches } from './filter.ts';
export { filterError, newAclError } from './validate.ts';
export { AclIndex, type ResourceAcls } from './acl-index.ts';
export {
  Authorizer,
  authorizerOptionsFromProperties,
  parseSuperUsers,
  type AuditFlags,
  type AuthorizationAudit,
  type AuthorizationDecision,
  type AuthorizationRule,
  type AuthorizerOptions,
} from './authorizer.ts';
export { ACL_RECORD_NAME_KEY_CHARS_MAX, ACL_RECORDS_PREFIX, aclRecordKey, decodeAclRecord, encodeAclRecord, recordKeyError, type AclRecord } from './acl-record.ts';
export {
  ACL_CAS_ATTEMPTS_MAX,
  ACL_REFRESH_INTERVAL_MS_DEFAULT,
  ACL_WRITES_CONCURRENCY_MAX,
  AclStore,
  type AclCreateResult,
  type AclDeleteResult,
  type AclDeletion,
  type AclError,
  type AclService,
} from './acl-store.ts';
