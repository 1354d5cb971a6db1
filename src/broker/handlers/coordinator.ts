import { CoordinatorKeyType, type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../apis/find-coordinator.ts';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../apis/init-producer-id.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowed, allowedOnAnyOf, allowedOnCluster, AuthorizationMessage, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { endpointFor } from '../../cluster/endpoints.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';

/**
 * Transactions do not exist in Ferry yet. A transactional producer finds its coordinator (as a
 * group's) and is refused by its InitProducerId with an error no client retries, so that it fails
 * at once rather than retrying until its own timeout: librdkafka treats only authorization errors
 * as fatal there, and kafkajs reports a FindCoordinator refusal as "Failed to find group
 * coordinator", which would send its user looking for a broker problem.
 */
const TRANSACTIONS_REFUSED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;

/**
 * The coordinator of each key, a group's or a transactional id's: the topology's pick, at its
 * endpoint of the request's listener (COORDINATOR_NOT_AVAILABLE if it has none). Before v4 a
 * request names one key and the answer is at the top level; from v4 (KIP-699) it names several,
 * each answered in `coordinators`. The version writes its shape. As Kafka's KafkaApis.getCoordinator:
 * a group needs DESCRIBE on it (GROUP_AUTHORIZATION_FAILED), a transactional id DESCRIBE on it
 * (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
 */
export function handleFindCoordinator(context: BrokerContext, request: FindCoordinatorRequest, session: Session = LOCAL_SESSION): FindCoordinatorResponse {
  if (request.coordinatorKeys.length === 0) {
    const { errorCode, errorMessage, nodeId, host, port } = coordinatorOf(context, session, request.key, request.keyType);
    // Kafka answers a refusal before v4 as its error response: the error's own message.
    return { throttleTimeMs: 0, errorCode, errorMessage: errorMessage ?? REFUSAL_MESSAGES.get(errorCode) ?? null, nodeId, host, port };
  }
  return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map((key) => coordinatorOf(context, session, key, request.keyType)) };
}

const REFUSAL_MESSAGES = new Map<number, string>([
  [ErrorCode.GROUP_AUTHORIZATION_FAILED, AuthorizationMessage.GROUP],
  [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, AuthorizationMessage.TRANSACTIONAL_ID],
]);

function coordinatorOf(context: BrokerContext, session: Session, key: string, keyType: number): Coordinator {
  const refused = (errorCode: number, errorMessage: string | null) => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage });
  if (keyType === CoordinatorKeyType.GROUP && !allowed(context, session, AclOperation.DESCRIBE, ResourceType.GROUP, key)) return refused(ErrorCode.GROUP_AUTHORIZATION_FAILED, null);
  if (keyType === CoordinatorKeyType.TRANSACTION && !allowed(context, session, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, key))
    return refused(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, null);
  if (keyType !== CoordinatorKeyType.GROUP && keyType !== CoordinatorKeyType.TRANSACTION) return refused(ErrorCode.INVALID_REQUEST, `coordinator type ${keyType} is not supported`);
  const coordinator = context.topology.coordinatorFor(key);
  if (coordinator === null) return refused(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'no live broker');
  const endpoint = endpointFor(coordinator, session.listenerName);
  if (endpoint === null) return refused(ErrorCode.COORDINATOR_NOT_AVAILABLE, `the coordinator has no listener ${session.listenerName}`);
  return { key, nodeId: coordinator.nodeId, host: endpoint.host, port: endpoint.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

/**
 * Idempotent producers get a fresh id; transactional ones are refused (see TRANSACTIONS_REFUSED).
 * Authorized first, as Kafka's KafkaApis.handleInitProducerIdRequest: a transactional id needs
 * WRITE on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer IDEMPOTENT_WRITE on
 * the cluster (its denial not logged) or WRITE on some topic (KIP-679), else CLUSTER_AUTHORIZATION_FAILED.
 * A block of ids that could not be reserved (the store or control records unreachable) is
 * answered as Kafka does when no block is at hand, COORDINATOR_LOAD_IN_PROGRESS: every client
 * retries it, where kafkajs gives up an InitProducerId on KAFKA_STORAGE_ERROR (it retries only
 * coordinator errors).
 */
export async function handleInitProducerId(context: BrokerContext, request: InitProducerIdRequest, session: Session = LOCAL_SESSION): Promise<InitProducerIdResponse> {
  const failed = (errorCode: number): InitProducerIdResponse => ({ throttleTimeMs: 0, errorCode, producerId: -1, producerEpoch: -1 });
  if (request.transactionalId !== null) {
    if (!allowed(context, session, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId)) return failed(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    return failed(TRANSACTIONS_REFUSED);
  }
  if (!allowedOnCluster(context, session, AclOperation.IDEMPOTENT_WRITE, { logIfDenied: false }) && !allowedOnAnyOf(context, session, AclOperation.WRITE, ResourceType.TOPIC)) {
    return failed(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
  }
  try {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: await context.producers.allocate(), producerEpoch: 0 };
  } catch (error) {
    const code = errorCodeOf(error);
    return { throttleTimeMs: 0, errorCode: code === ErrorCode.KAFKA_STORAGE_ERROR ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : code, producerId: -1, producerEpoch: -1 };
  }
}
