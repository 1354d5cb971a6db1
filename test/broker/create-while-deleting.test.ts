// A topic created (CreateTopics, or a Metadata auto-create) while its delete is still under way on
// a single broker: the name is taken until the old incarnation's logs are gone, so the create
// answers "exists" (TOPIC_ALREADY_EXISTS, as Kafka answers for a topic marked for deletion), never
// an error that fails the whole request; once the delete is done the name is free.
import { expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { tempDir } from '../support/temp-dir.ts';

test('creating a topic whose delete is under way answers that it exists, then succeeds once the delete is done', async () => {
  const broker = await Broker.start({ listenHost: '127.0.0.1', listenPort: 0, nodeId: 1, engine: { directory: tempDir() } });
  const { topology } = broker.context;
  try {
    expect(await topology.createTopic('d1', 1)).toBe(true);
    await broker.context.engine.produce('d1', [{ value: 'old' }], { partition: 0 });
    const deleting = topology.deleteTopic('d1');
    expect(await topology.createTopic('d1', 1)).toBe(false);
    expect(await topology.partitionCount('d1')).toBeNull(); // gone for readers already (Metadata answers UNKNOWN_TOPIC_OR_PARTITION)
    await deleting;
    expect(await topology.createTopic('d1', 1)).toBe(true);
    expect(broker.context.engine.logEndOffset('d1', 0)).toBe(0);
  } finally {
    await broker.stop();
  }
});
