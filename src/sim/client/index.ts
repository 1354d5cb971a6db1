/** The simulation's Kafka clients: they speak the wire protocol to the real broker over the injected Network. */
export { SimAdmin } from './admin.ts';
export { type CommittedOffsetsReaderOptions, SimCommittedOffsetsReader } from './committed-offsets-reader.ts';
export { type ConsumerOptions, SimConsumer } from './consumer.ts';
export type { BrokerAddress, ClientOptions, SimClient } from './context.ts';
export { type GroupConsumerOptions, SimGroupConsumer } from './group-consumer.ts';
export { type ProduceResult, type ProducerOptions, SimProducer } from './producer.ts';
