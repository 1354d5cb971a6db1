import { CoordinatorKeyType, type Coordinator, type FindCoordinatorRequest, type FindCoordinatorResponse } from '../apis/find-coordinator.ts';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../apis/init-producer-id.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
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
 * The coordinator of each key, a group's or a transactional id's: the topology's pick. Before v4 a request names one key and the answer is at the top level; from v4
 * (KIP-699) it names several, each answered in `coordinators`. The version writes its shape.
 */
export function handleFindCoordinator(context: BrokerContext, request: FindCoordinatorRequest, session: Session = LOCAL_SESSION): FindCoordinatorResponse {
  if (request.coordinatorKeys.length === 0) {
    const { errorCode, errorMessage, nodeId, host, port } = coordinatorOf(context, request.key, request.keyType);
    return { throttleTimeMs: 0, errorCode, errorMessage, nodeId, host, port };
  }
  return { throttleTimeMs: 0, coordinators: request.coordinatorKeys.map((key) => coordinatorOf(context, key, request.keyType)) };
}

function coordinatorOf(context: BrokerContext, key: string, keyType: number): Coordinator {
  const refused = (errorCode: number, errorMessage: string) => ({ key, nodeId: -1, host: '', port: -1, errorCode, errorMessage });
  if (keyType !== CoordinatorKeyType.GROUP && keyType !== CoordinatorKeyType.TRANSACTION) return refused(ErrorCode.INVALID_REQUEST, `coordinator type ${keyType} is not supported`);
  const coordinator = context.topology.coordinatorFor(key);
  if (coordinator === null) return refused(ErrorCode.COORDINATOR_NOT_AVAILABLE, 'no live broker');
  return { key, nodeId: coordinator.nodeId, host: coordinator.host, port: coordinator.port, errorCode: ErrorCode.NONE, errorMessage: null };
}

/**
 * Idempotent producers get a fresh id; transactional ones are refused (see TRANSACTIONS_REFUSED).
 * A block of ids that could not be reserved (the store or control records unreachable) is
 * answered as Kafka does when no block is at hand, COORDINATOR_LOAD_IN_PROGRESS: every client
 * retries it, where kafkajs gives up an InitProducerId on KAFKA_STORAGE_ERROR (it retries only
 * coordinator errors).
 */
export async function handleInitProducerId(context: BrokerContext, request: InitProducerIdRequest, session: Session = LOCAL_SESSION): Promise<InitProducerIdResponse> {
  if (request.transactionalId !== null) return { throttleTimeMs: 0, errorCode: TRANSACTIONS_REFUSED, producerId: -1, producerEpoch: -1 };
  try {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: await context.producers.allocate(), producerEpoch: 0 };
  } catch (error) {
    const code = errorCodeOf(error);
    return { throttleTimeMs: 0, errorCode: code === ErrorCode.KAFKA_STORAGE_ERROR ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : code, producerId: -1, producerEpoch: -1 };
  }
}
