// Found by the simulation (issue 25, seed 4): a lone broker on a full disk answered an
// IncrementalAlterConfigs KAFKA_STORAGE_ERROR, an error Kafka gives a partition, never a config
// change. A change that failed on storage may have taken effect in part: REQUEST_TIMED_OUT, as
// Kafka answers when its controller did not commit the change in time.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleIncrementalAlterConfigs } from '../../../src/broker/handlers/configs.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { FerryError } from '../../../src/errors.ts';

/** SET, in IncrementalAlterConfigs' config operations. */
const SET = 0;
const TOPIC_RESOURCE = 2;

function contextFailingWith(error: unknown): BrokerContext {
  const topology = { partitionCount: async () => 1, alterTopicConfig: async () => Promise.reject(error) };
  return { topology, security: { authorizer: null } } as unknown as BrokerContext;
}

async function answerTo(error: unknown): Promise<number> {
  const request = { validateOnly: false, resources: [{ resourceType: TOPIC_RESOURCE, resourceName: 't', configs: [{ name: 'retention.ms', configOperation: SET, value: '1000' }] }] };
  const response = await handleIncrementalAlterConfigs(contextFailingWith(error), request);
  return response.responses[0]!.errorCode;
}

test('an alteration that fails on the disk answers REQUEST_TIMED_OUT, not KAFKA_STORAGE_ERROR', async () => {
  const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
  expect(await answerTo(full)).toBe(ErrorCode.REQUEST_TIMED_OUT);
});

test('an alteration refused for a bad value keeps its own answer', async () => {
  expect(await answerTo(new FerryError('InvalidConfig', 'retention.ms must be a number'))).toBe(ErrorCode.INVALID_CONFIG);
});
