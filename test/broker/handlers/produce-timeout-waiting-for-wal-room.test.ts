// WAL uploads retry a store outage without a bound (issue 9 finding 16), and backpressure holds
// producers at maxBufferedBytes. A Produce request waiting there for room waited past its own
// timeout_ms, unanswered: the client times out and retries (each retry one more request held, with
// its bytes in the broker's request memory), and nothing tells it why. Kafka answers every
// acks=all Produce within its timeout; REQUEST_TIMED_OUT is retriable, and an idempotent retry of
// a batch that did land later is a duplicate.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { handleProduce } from '../../../src/broker/handlers/produce.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { SingleBrokerTopology } from '../../../src/broker/topology.ts';
import { Engine } from '../../../src/engine/index.ts';
import { buildRecordBatch } from '../../../src/format/batch-builder.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { advanceThrough, settle } from '../../support/settle.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { OPEN_SECURITY } from '../../support/broker-security.ts';

const UPLOAD_BYTES = 1024;
const TIMEOUT_MS = 1000;

test('an acks=all Produce waiting for room in the WAL buffer during a store outage is answered REQUEST_TIMED_OUT within its timeout', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const engine = await Engine.open({
    directory: tempDir(),
    clock,
    log: { flush: { kind: 'none' } },
    wal: { store, writerId: 'w', config: { uploadBytes: UPLOAD_BYTES, maxBufferedBytes: UPLOAD_BYTES } },
  });
  engine.createTopic('t');
  store.injectFault({ operation: 'put', kind: 'Unavailable', count: Number.MAX_SAFE_INTEGER, keyPrefix: 'wal/' });
  const context = {
    ...OPEN_SECURITY,
    nodeId: 1,
    advertisedHost: '127.0.0.1',
    advertisedPort: 9092,
    rack: null,
    clusterId: 'room',
    engine,
    clock,
    topology: new SingleBrokerTopology({ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }, engine),
    autoCreateTopics: false,
    defaultPartitions: 1,
  } as unknown as BrokerContext;
  const produce = (value: string) =>
    handleProduce(context, {
      transactionalId: null,
      acks: -1,
      timeoutMs: TIMEOUT_MS,
      topicData: [{ name: 't', partitionData: [{ index: 0, records: buildRecordBatch([{ value }], { nowMs: clock.nowMs() }) }] }],
    });
  const first = produce('x'.repeat(2 * UPLOAD_BYTES)); // fills the buffer; its object cannot be uploaded
  await settle(); // appended: the buffer is over its bound
  const second = produce('waits for room');
  const answers = await advanceThrough(clock, Promise.all([first, second]), 'both answers', 10, 10 * TIMEOUT_MS);
  expect(answers.map((answer) => answer!.responses[0]!.partitionResponses[0]!.errorCode)).toEqual([ErrorCode.REQUEST_TIMED_OUT, ErrorCode.REQUEST_TIMED_OUT]);
  expect(engine.logEndOffset('t', 0)).toBe(1); // the request that timed out waiting for room was not appended
  engine.wal!.fence('test over');
  await engine.close();
});
