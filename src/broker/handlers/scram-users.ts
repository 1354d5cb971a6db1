import type { AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse } from '../apis/alter-user-scram-credentials.ts';
import type { DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse } from '../apis/describe-user-scram-credentials.ts';
import { AclOperation } from '../../security/acl/model.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Session } from '../../security/session.ts';
import { allowedOnCluster, LOCAL_SESSION } from './authorize.ts';

/**
 * DescribeUserScramCredentials: each user's mechanisms and iterations from the control records
 * (never a salt or key); all users for a null list. Needs DESCRIBE on the cluster, as in Kafka.
 */
export async function handleDescribeUserScramCredentials(
  context: BrokerContext,
  request: DescribeUserScramCredentialsRequest,
  session: Session = LOCAL_SESSION,
): Promise<DescribeUserScramCredentialsResponse> {
  if (!allowedOnCluster(context, session, AclOperation.DESCRIBE)) return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, results: [] };
  const results = await context.security.scram.describe(request.users === null ? null : request.users.map((user) => user.name));
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results };
}

/**
 * AlterUserScramCredentials: the admin client sends salted passwords (never the password); the
 * store keeps Kafka's stored and server keys, by compare-and-swap. Needs ALTER on the cluster:
 * without it every user's result is CLUSTER_AUTHORIZATION_FAILED and nothing changes.
 */
export async function handleAlterUserScramCredentials(context: BrokerContext, request: AlterUserScramCredentialsRequest, session: Session = LOCAL_SESSION): Promise<AlterUserScramCredentialsResponse> {
  if (!allowedOnCluster(context, session, AclOperation.ALTER)) {
    const users = [...new Set([...request.deletions, ...request.upsertions].map((change) => change.name))];
    return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) };
  }
  return { throttleTimeMs: 0, results: await context.security.scram.alter(request.deletions, request.upsertions) };
}
