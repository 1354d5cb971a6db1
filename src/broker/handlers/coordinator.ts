import type { FindCoordinatorRequest, FindCoordinatorResponse } from '../apis/find-coordinator.ts';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../apis/init-producer-id.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { errorCodeOf } from './errors.ts';

const GROUP_KEY_TYPE = 0;

/** This broker coordinates every group; transaction coordinators do not exist (no transactions yet). */
export function handleFindCoordinator(context: BrokerContext, request: FindCoordinatorRequest): FindCoordinatorResponse {
  if (request.keyType !== GROUP_KEY_TYPE) {
    return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'transactions are not supported', nodeId: -1, host: '', port: -1 };
  }
  const coordinator = context.topology.coordinatorFor(request.key);
  if (coordinator === null) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'no live broker', nodeId: -1, host: '', port: -1 };
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, nodeId: coordinator.nodeId, host: coordinator.host, port: coordinator.port };
}

/**
 * Idempotent producers get a fresh id; transactional ones are refused (not supported yet). A block
 * of ids that could not be reserved (the store or control records unreachable) is answered as
 * Kafka does when no block is at hand, COORDINATOR_LOAD_IN_PROGRESS: every client retries it, where
 * kafkajs gives up an InitProducerId on KAFKA_STORAGE_ERROR (it retries only coordinator errors).
 */
export async function handleInitProducerId(context: BrokerContext, request: InitProducerIdRequest): Promise<InitProducerIdResponse> {
  if (request.transactionalId !== null) return { throttleTimeMs: 0, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, producerId: -1, producerEpoch: -1 };
  try {
    return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId: await context.producers.allocate(), producerEpoch: 0 };
  } catch (error) {
    const code = errorCodeOf(error);
    return { throttleTimeMs: 0, errorCode: code === ErrorCode.KAFKA_STORAGE_ERROR ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : code, producerId: -1, producerEpoch: -1 };
  }
}
