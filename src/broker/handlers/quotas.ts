// DescribeClientQuotas and AlterClientQuotas as Kafka answers them (KafkaApis
// handleDescribeClientQuotasRequest, ControllerApis/KafkaApis handleAlterClientQuotasRequest):
// DESCRIBE_CONFIGS on the cluster to describe, ALTER_CONFIGS to alter (else
// CLUSTER_AUTHORIZATION_FAILED with the request's getErrorResponse), then the store's answer
// (src/security/quotas/store.ts: Kafka's checks and messages).
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../apis/alter-client-quotas.ts';
import type { DescribeClientQuotasRequest, DescribeClientQuotasResponse } from '../apis/describe-client-quotas.ts';
import { AclOperation } from '../../security/acl/model.ts';
import type { ClientQuotaService } from '../../security/quotas/store.ts';
import type { Session } from '../../security/session.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { allowedOnCluster, LOCAL_SESSION } from './authorize.ts';

/** Kafka's message of CLUSTER_AUTHORIZATION_FAILED (Errors.CLUSTER_AUTHORIZATION_FAILED's exception). */
export const CLUSTER_AUTHORIZATION_FAILED_MESSAGE = 'Cluster authorization failed.';
/** The answer of a broker that holds no quota store. */
export const QUOTAS_UNAVAILABLE_MESSAGE = 'Client quotas are not available on this broker';

/** What the handlers need of the broker: the authorizer and the quota store (BrokerSecurity.quotas). */
export type QuotaContext = Pick<BrokerContext, 'security'>;

/** The quota store the broker's security holds; null for a context without one (a test's). */
function quotaServiceOf(context: QuotaContext): ClientQuotaService | null {
  return context.security.quotas ?? null;
}

/** The quotas of the entities the filter selects; the request's error with entries null. */
export function handleDescribeClientQuotas(context: QuotaContext, request: DescribeClientQuotasRequest, session: Session = LOCAL_SESSION): DescribeClientQuotasResponse {
  const failed = (errorCode: number, errorMessage: string): DescribeClientQuotasResponse => ({ throttleTimeMs: 0, errorCode, errorMessage, entries: null });
  if (!allowedOnCluster(context, session, AclOperation.DESCRIBE_CONFIGS)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED_MESSAGE);
  const quotas = quotaServiceOf(context);
  if (quotas === null) return failed(ErrorCode.UNKNOWN_SERVER_ERROR, QUOTAS_UNAVAILABLE_MESSAGE);
  const result = quotas.describe(request.components, request.strict);
  return { throttleTimeMs: 0, errorCode: result.errorCode, errorMessage: result.errorMessage, entries: result.entries };
}

/** Sets and removes quotas: one result per entity named, in the order first named. */
export async function handleAlterClientQuotas(context: QuotaContext, request: AlterClientQuotasRequest, session: Session = LOCAL_SESSION): Promise<AlterClientQuotasResponse> {
  // AlterClientQuotasRequest.getErrorResponse: every entry, as sent, with the error.
  const failed = (errorCode: number, errorMessage: string): AlterClientQuotasResponse => ({
    throttleTimeMs: 0,
    entries: request.entries.map((entry) => ({ errorCode, errorMessage, entity: entry.entity.map(({ entityType, entityName }) => ({ entityType, entityName })) })),
  });
  if (!allowedOnCluster(context, session, AclOperation.ALTER_CONFIGS)) return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED_MESSAGE);
  const quotas = quotaServiceOf(context);
  if (quotas === null) return failed(ErrorCode.UNKNOWN_SERVER_ERROR, QUOTAS_UNAVAILABLE_MESSAGE);
  const results = await quotas.alter(request.entries, request.validateOnly);
  return { throttleTimeMs: 0, entries: results.map(({ entity, errorCode, errorMessage }) => ({ errorCode, errorMessage, entity })) };
}
