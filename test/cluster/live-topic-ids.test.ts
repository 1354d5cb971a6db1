// The cluster's live topic ids for the tier's sweep of deleted incarnations: a topic record
// marked deleting, or gone, is not live; a re-created name is live under its new id only.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/cluster/control-store.ts';
import { clusterLiveTopicIds } from '../../src/cluster/live-topic-ids.ts';
import type { TopicRecord } from '../../src/cluster/node.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid } from '../../src/util/uuid.ts';

test('topics marked deleting or removed are not live; each call reads the records again', async () => {
  const control = new ControlStore(new MemoryStore(), '');
  const random = new SeededRandom(3);
  const [a, b, c] = [randomUuid(random), randomUuid(random), randomUuid(random)];
  await control.put<TopicRecord>('topics/a', { topicId: a, partitions: 1 });
  await control.put<TopicRecord>('topics/b', { topicId: b, partitions: 1 });
  const live = clusterLiveTopicIds(control);
  expect([...(await live())].sort()).toEqual([a, b].sort());
  await control.put<TopicRecord>('topics/a', { topicId: a, partitions: 1, deleting: true });
  await control.delete('topics/b');
  await control.put<TopicRecord>('topics/c', { topicId: c, partitions: 1 });
  expect([...(await live())]).toEqual([c]);
});
