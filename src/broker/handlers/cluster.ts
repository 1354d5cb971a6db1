import type { DescribeClusterRequest, DescribeClusterResponse } from '../apis/describe-cluster.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { AclOperation, CLUSTER_NAME, ResourceType } from '../../security/acl/model.ts';
import { allowedOnCluster, AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations, LOCAL_SESSION } from './authorize.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { endpointFor } from '../../cluster/endpoints.ts';

/** DescribeCluster's endpoint types (KIP-919): Ferry's brokers are the only endpoints; there are no controllers. */
const BROKERS_ENDPOINT = 1;

/**
 * The live brokers, as Metadata lists them (KIP-700): each at its endpoint of the request's
 * listener, those without it left out; the controller as Metadata names it (-1 if none is live).
 * As in Kafka (AuthHelper.computeDescribeClusterResponse) anyone may describe the cluster; DESCRIBE
 * on it decides only the authorized operations asked for (0 without it).
 */
export function handleDescribeCluster(context: BrokerContext, request: DescribeClusterRequest, session: Session = LOCAL_SESSION): DescribeClusterResponse {
  const base = { throttleTimeMs: 0, endpointType: BROKERS_ENDPOINT, clusterId: context.clusterId, clusterAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
  if (request.endpointType !== BROKERS_ENDPOINT) {
    return {
      ...base,
      errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
      errorMessage: `endpoint type ${request.endpointType} is not served: a Ferry cluster has brokers only`,
      controllerId: -1,
      brokers: [],
    };
  }
  const brokers = context.topology.brokers().flatMap((broker) => {
    const endpoint = endpointFor(broker, session.listenerName);
    return endpoint === null ? [] : [{ brokerId: broker.nodeId, host: endpoint.host, port: endpoint.port, rack: broker.rack }];
  });
  return {
    ...base,
    errorCode: ErrorCode.NONE,
    errorMessage: null,
    controllerId: context.topology.controllerId() ?? -1,
    brokers,
    clusterAuthorizedOperations: request.includeClusterAuthorizedOperations ? clusterOperations(context, session) : AUTHORIZED_OPERATIONS_OMITTED,
  };
}

function clusterOperations(context: BrokerContext, session: Session): number {
  return allowedOnCluster(context, session, AclOperation.DESCRIBE) ? authorizedOperations(context, session, ResourceType.CLUSTER, CLUSTER_NAME) : 0;
}
