/**
 * The controller's requests (CreateTopics, DeleteTopics, CreatePartitions: what Kafka's clients
 * send to the broker Metadata names controller) are answered only by the controller
 * (Topology.controllerId). Any Ferry broker could carry them out (the control records decide), but
 * a client that sent one to a broker that is not the controller holds stale Metadata: the
 * controller it knew may be paused, its lease lapsed, and the requests it sends there wait out the
 * client's timeout (60 s in librdkafka). NOT_CONTROLLER tells it to read Metadata again. Checked
 * after authorization: a client that may not make the change learns that first, wherever it asks.
 */
import type { BrokerContext } from '../context.ts';

/** Kafka's message of NOT_CONTROLLER (Errors.java), with who the controller is as this broker sees it. */
export function notControllerMessage(context: BrokerContext): string | null {
  const controller = context.topology.controllerId();
  if (controller === context.nodeId) return null;
  const named = controller === null ? 'no broker is live as this broker sees the cluster' : `the controller is broker ${controller}`;
  return `This is not the correct controller for this cluster: broker ${context.nodeId} is not the controller (${named}); read Metadata again.`;
}
