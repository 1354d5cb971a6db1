// DescribeAcls, CreateAcls and DeleteAcls as Kafka's AclApis (core/src/main/scala/kafka/server/
// AclApis.scala) answers them. Without an authorizer (no AclService): SECURITY_DISABLED, the
// connection kept. With one: DESCRIBE on the cluster to describe, ALTER on the cluster to create
// or delete (else CLUSTER_AUTHORIZATION_FAILED for every item), then Kafka's validation
// (AclApis' checks here, AclControlManager's in the store) and one result per item in order.
import type { CreateAclsRequest, CreateAclsResponse } from '../apis/create-acls.ts';
import type { DeleteAclsFilterResult, DeleteAclsMatchingAcl, DeleteAclsRequest, DeleteAclsResponse } from '../apis/delete-acls.ts';
import type { DescribeAclsRequest, DescribeAclsResource, DescribeAclsResponse } from '../apis/describe-acls.ts';
import type { AclCreation } from '../../protocol/messages/create-acls.ts';
import type { DeleteAclsFilter } from '../../protocol/messages/delete-acls.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { AclDeleteResult, AclError, AclService } from '../../security/acl/acl-store.ts';
import { filterError } from '../../security/acl/validate.ts';
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  aclOperationFromCode,
  aclPermissionTypeFromCode,
  CLUSTER_NAME,
  patternTypeFromCode,
  ResourceType,
  resourceTypeFromCode,
} from '../../security/acl/model.ts';
import { principalText } from '../../security/principal.ts';
import type { Session } from '../../security/session.ts';
import { regressed } from '../../util/regressions.ts';

/** Kafka's words for DescribeAcls without an authorizer. */
export const DESCRIBE_ACLS_DISABLED_MESSAGE = 'No Authorizer is configured on the broker';
/** Kafka's words for CreateAcls and DeleteAcls without an authorizer (its SecurityDisabledException). */
export const ALTER_ACLS_DISABLED_MESSAGE = 'No Authorizer is configured.';
/** Kafka's words (DescribeAclsRequest.normalizeAndValidate) for a filter with a type it does not know. */
export const DESCRIBE_ACLS_UNKNOWN_MESSAGE = 'DescribeAclsRequest contains UNKNOWN elements';
/** AclApis: a CLUSTER ACL names the one cluster resource. */
export const CLUSTER_NAME_MESSAGE = `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
export const EMPTY_NAME_MESSAGE = 'Invalid empty resource name';

/** One top-level SECURITY_DISABLED and no resources, whatever the filter. */
export function handleDescribeAcls(): DescribeAclsResponse {
  return { throttleTimeMs: 0, errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: DESCRIBE_ACLS_DISABLED_MESSAGE, resources: [] };
}

/** One SECURITY_DISABLED result per creation, in the request's order (clients match them by position). */
export function handleCreateAcls(request: CreateAclsRequest): CreateAclsResponse {
  const results = request.creations.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ALTER_ACLS_DISABLED_MESSAGE }));
  return { throttleTimeMs: 0, results };
}

/** One SECURITY_DISABLED result per filter, in the request's order, none matching an ACL. */
export function handleDeleteAcls(request: DeleteAclsRequest): DeleteAclsResponse {
  const filterResults = request.filters.map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ALTER_ACLS_DISABLED_MESSAGE, matchingAcls: [] }));
  return { throttleTimeMs: 0, filterResults };
}

/** The ACLs the filter selects, one resource per pattern (Kafka's DescribeAclsResponse.aclsResources). */
export function handleDescribeAclsWith(acls: AclService | null, session: Session, request: DescribeAclsRequest): DescribeAclsResponse {
  if (acls === null) return handleDescribeAcls();
  const failed = (errorCode: number, errorMessage: string): DescribeAclsResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, resources: [] });
  if (!acls.authorizer.authorize(session, AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME)) {
    return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, notAuthorizedMessage('DescribeAcls', session));
  }
  const filter = bindingFilter(request);
  if (filterError(filter) !== null) return failed(ErrorCode.INVALID_REQUEST, DESCRIBE_ACLS_UNKNOWN_MESSAGE);
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, resources: describedResources(acls.acls(filter)) };
}

/** Creates the ACLs: one result per creation in order; an ACL that exists already is a success. */
export async function handleCreateAclsWith(acls: AclService | null, session: Session, request: CreateAclsRequest): Promise<CreateAclsResponse> {
  if (acls === null) return handleCreateAcls(request);
  if (!acls.authorizer.authorize(session, AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)) {
    const errorMessage = notAuthorizedMessage('CreateAcls', session);
    return { throttleTimeMs: 0, results: request.creations.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage })) };
  }
  const bindings = request.creations.map(aclBinding);
  const refusals = bindings.map(apiRefusal);
  const accepted = bindings.filter((_, index) => refusals[index] === null);
  const created = await acls.create(accepted);
  let next = 0;
  const results = refusals.map((refusal) => {
    if (refusal !== null) return { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: refusal };
    return errorFields(created[next++]!.error);
  });
  return { throttleTimeMs: 0, results };
}

/** Deletes what each filter matches: one result per filter in order, with the ACLs it matched. */
export async function handleDeleteAclsWith(acls: AclService | null, session: Session, request: DeleteAclsRequest): Promise<DeleteAclsResponse> {
  if (acls === null) return handleDeleteAcls(request);
  if (!acls.authorizer.authorize(session, AclOperation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)) {
    const errorMessage = notAuthorizedMessage('DeleteAcls', session);
    return { throttleTimeMs: 0, filterResults: request.filters.map(() => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage, matchingAcls: [] })) };
  }
  const results = await acls.delete(request.filters.map(bindingFilter));
  return { throttleTimeMs: 0, filterResults: results.map(filterResult) };
}

/** Kafka's AuthHelper.authorizeClusterOperation message, naming the request by API and session. */
function notAuthorizedMessage(api: string, session: Session): string {
  return `Request ${api} from ${principalText(session.principal)} at ${session.clientAddress} is not authorized.`;
}

/** Kafka's CreateAclsRequest.aclBinding: codes it does not know become UNKNOWN (refused by the store). */
function aclBinding(creation: AclCreation): AclBinding {
  return {
    pattern: { resourceType: resourceTypeFromCode(creation.resourceType), name: creation.resourceName, patternType: patternTypeFromCode(creation.resourcePatternType) },
    entry: { principal: creation.principal, host: creation.host, operation: aclOperationFromCode(creation.operation), permissionType: aclPermissionTypeFromCode(creation.permissionType) },
  };
}

/** AclApis' own checks before the authorizer sees a creation. */
function apiRefusal(binding: AclBinding): string | null {
  if (binding.pattern.resourceType === ResourceType.CLUSTER && binding.pattern.name !== CLUSTER_NAME) return CLUSTER_NAME_MESSAGE;
  if (binding.pattern.name === '') return EMPTY_NAME_MESSAGE;
  return null;
}

/** DescribeAcls' and DeleteAcls' filter fields (the same names in both messages). */
function bindingFilter(filter: DescribeAclsRequest | DeleteAclsFilter): AclBindingFilter {
  return {
    pattern: { resourceType: resourceTypeFromCode(filter.resourceTypeFilter), name: filter.resourceNameFilter, patternType: patternTypeFromCode(filter.patternTypeFilter) },
    entry: { principal: filter.principalFilter, host: filter.hostFilter, operation: aclOperationFromCode(filter.operation), permissionType: aclPermissionTypeFromCode(filter.permissionType) },
  };
}

function describedResources(bindings: readonly AclBinding[]): DescribeAclsResource[] {
  const resources = new Map<string, { resourceType: number; resourceName: string; patternType: number; acls: DescribeAclsResource['acls'][number][] }>();
  for (const { pattern, entry } of bindings) {
    const key = `${pattern.resourceType}/${pattern.patternType}/${pattern.name}`;
    let resource = resources.get(key);
    if (resource === undefined) resources.set(key, (resource = { resourceType: pattern.resourceType, resourceName: pattern.name, patternType: pattern.patternType, acls: [] }));
    resource.acls.push({ principal: entry.principal, host: entry.host, operation: entry.operation, permissionType: entry.permissionType });
  }
  return [...resources.values()];
}

function filterResult(result: AclDeleteResult): DeleteAclsFilterResult {
  if (result.error !== null) return { ...errorFields(result.error), matchingAcls: [] };
  const matchingAcls = result.deletions.map(
    ({ binding: { pattern, entry }, error }): DeleteAclsMatchingAcl => ({
      ...errorFields(error),
      resourceType: pattern.resourceType,
      resourceName: pattern.name,
      patternType: pattern.patternType,
      principal: entry.principal,
      host: entry.host,
      operation: entry.operation,
      permissionType: entry.permissionType,
    }),
  );
  return { errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls };
}

/**
 * A store failure is REQUEST_TIMED_OUT, with its message (never a silent success): Kafka's answer
 * when its controller did not commit an ACL change in time, which may still have happened (a
 * write whose answer was lost). Never UNKNOWN_SERVER_ERROR, Kafka's word for a broker's bug.
 */
function errorFields(error: AclError | null): { errorCode: number; errorMessage: string | null } {
  if (error === null) return { errorCode: ErrorCode.NONE, errorMessage: null };
  if (error.kind !== 'InvalidRequest' && regressed('acl-change-unknown-server-error')) return { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: error.message };
  return { errorCode: error.kind === 'InvalidRequest' ? ErrorCode.INVALID_REQUEST : ErrorCode.REQUEST_TIMED_OUT, errorMessage: error.message };
}
