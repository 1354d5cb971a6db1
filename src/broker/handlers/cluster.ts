import type { DescribeClusterRequest, DescribeClusterResponse } from '../apis/describe-cluster.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../protocol/error-codes.ts';

/** DescribeCluster's endpoint types (KIP-919): Ferry's brokers are the only endpoints; there are no controllers. */
const BROKERS_ENDPOINT = 1;
/** "No authorized operations reported" (Kafka's -2^31 sentinel). */
const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

/** The live brokers, as Metadata lists them (KIP-700). The lowest node id stands in for a controller, as in Metadata. */
export function handleDescribeCluster(context: BrokerContext, request: DescribeClusterRequest, session: Session = LOCAL_SESSION): DescribeClusterResponse {
  const brokers = context.topology.brokers();
  const base = { throttleTimeMs: 0, endpointType: BROKERS_ENDPOINT, clusterId: context.clusterId, clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
  if (request.endpointType !== BROKERS_ENDPOINT) {
    return { ...base, errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: `endpoint type ${request.endpointType} is not served: a Ferry cluster has brokers only`, controllerId: -1, brokers: [] };
  }
  return {
    ...base,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    controllerId: brokers[0]?.nodeId ?? context.nodeId,
    brokers: brokers.map((broker) => ({ brokerId: broker.nodeId, host: broker.host, port: broker.port, rack: broker.rack })),
  };
}
