// InitProducerId while the cluster's control records cannot be read or written (adversarial review
// r7). Kafka's broker answers COORDINATOR_LOAD_IN_PROGRESS when no producer-id block is at hand
// (its block request to the controller is still under way or failed), an error every client retries.
// Ferry answered KAFKA_STORAGE_ERROR: retriable for a Produce, but kafkajs's initProducerId retries
// only the coordinator errors (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS,
// CONCURRENT_TRANSACTIONS) and bails on any other, so an idempotent kafkajs producer's connect failed
// for good on a control-store blip. A failed reservation must also leave the next one free to try.
import { expect, test } from 'bun:test';
import { handleInitProducerId } from '../../../src/broker/handlers/coordinator.ts';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { ControlProducerIdBlocks, ProducerIds } from '../../../src/broker/producers.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

const request = { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 } as never;

test('InitProducerId answers a retriable coordinator error while the control store is down, and an id once it is back', async () => {
  const store = new MemoryStore();
  const context = { ...OPEN_SECURITY, producers: new ProducerIds(new ControlProducerIdBlocks(new ControlStore(store, 'cluster'))) } as unknown as BrokerContext;
  for (const operation of ['get', 'put'] as const) {
    store.injectFault({ operation, kind: 'Unavailable', keyPrefix: 'cluster/control/' });
    // two at once share the one reservation; both get the retriable answer
    const answers = await Promise.all([handleInitProducerId(context, request), handleInitProducerId(context, request)]);
    for (const answer of answers) expect(answer.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  }
  store.injectFault({ operation: 'get', kind: 'Timeout', keyPrefix: 'cluster/control/' });
  expect((await handleInitProducerId(context, request)).errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  // the store is back: the failed reservations are not remembered, a new one is made
  const ids = await Promise.all([handleInitProducerId(context, request), handleInitProducerId(context, request)]);
  for (const answer of ids) expect(answer.errorCode).toBe(ErrorCode.NONE);
  expect(new Set(ids.map((answer) => answer.producerId)).size).toBe(2);
});
