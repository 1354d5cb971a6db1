/** One listener of a broker as clients of that listener reach it (advertised.listeners). */
export interface ListenerEndpoint {
  readonly listener: string;
  readonly host: string;
  readonly port: number;
}

/** A broker as Metadata, FindCoordinator and DescribeCluster name it. */
export interface EndpointHolder {
  readonly host: string;
  readonly port: number;
  /** Every listener's address; absent for a broker with one listener (its host and port). */
  readonly endpoints?: readonly ListenerEndpoint[];
}

/**
 * Where a client of `listener` reaches `broker`, as Kafka answers: the broker's endpoint of that
 * listener name; null when the broker has listeners but none of that name (Kafka leaves such a
 * broker out). A broker without a list (one listener, or a record written before listeners had
 * names) is reached at its host and port.
 */
export function endpointFor(broker: EndpointHolder, listener: string): { readonly host: string; readonly port: number } | null {
  if (broker.endpoints === undefined) return { host: broker.host, port: broker.port };
  return broker.endpoints.find((endpoint) => endpoint.listener === listener) ?? null;
}
