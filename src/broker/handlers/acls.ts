// DescribeAcls, CreateAcls and DeleteAcls answered as a Kafka broker without an authorizer answers
// them (core/src/main/scala/kafka/server/AclApis.scala): SECURITY_DISABLED, the connection kept.
// Ferry has no authorizer yet (issue 13); until it has, every ACL request gets this answer.
import type { CreateAclsRequest, CreateAclsResponse } from '../apis/create-acls.ts';
import type { DeleteAclsRequest, DeleteAclsResponse } from '../apis/delete-acls.ts';
import type { DescribeAclsResponse } from '../apis/describe-acls.ts';
import { ErrorCode } from '../protocol/error-codes.ts';

/** Kafka's words for DescribeAcls without an authorizer. */
export const DESCRIBE_ACLS_DISABLED_MESSAGE = 'No Authorizer is configured on the broker';
/** Kafka's words for CreateAcls and DeleteAcls without an authorizer (its SecurityDisabledException). */
export const ALTER_ACLS_DISABLED_MESSAGE = 'No Authorizer is configured.';

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
