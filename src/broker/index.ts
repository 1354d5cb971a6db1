/**
 * The Kafka-protocol broker as a library (`import { Broker } from 'ferry/broker'`): real Kafka
 * clients (kcat, kafkajs, librdkafka) produce, fetch and form consumer groups against a Ferry
 * engine this process owns. `ferry broker` (src/cli/broker.ts) is this plus flags and signals.
 *
 * @example
 * ```ts
 * import { Broker } from 'ferry/broker';
 * import { FileStore } from 'ferry/store';
 *
 * const store = await FileStore.open('./objects');
 * const broker = await Broker.start({
 *   listenHost: '127.0.0.1',
 *   listenPort: 9092,
 *   nodeId: 1,
 *   engine: { directory: './data', wal: { store, writerId: 'broker-1' } },
 * });
 * // ... kcat -b 127.0.0.1:9092 ...
 * await broker.stop();
 * ```
 *
 * @module ferry/broker
 */
export { Broker, type BrokerOptions, type ClusterOptions } from './broker.ts';
export type { ListenerConfig, SaslListenerConfig } from './auth/listener-config.ts';
export type { BrokerSecurityOptions, InterBrokerClient } from './auth/broker-security.ts';
