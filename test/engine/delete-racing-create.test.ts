// Issue 9 finding 5, review: deleteTopic removes a partition's directory by its name
// (`<topic>-<partition>`) after awaiting the old log's close. A topic created again meanwhile (an
// auto-create of a producer still writing, another admin) opened its new incarnation in that same
// directory, so the old delete removed the new incarnation's log from under it: what it
// acknowledged was gone after a restart.
import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Ferry } from '../../src/ferry/index.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decode } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';

function values(ferry: Ferry, topic: string): string[] {
  return ferry.fetch(topic, 0, 0).batches.flatMap((batch) => [...batch.records()].map((record) => decode(record.value)!));
}

test('a delete under way never removes the directory of the incarnation created again meanwhile', async () => {
  const directory = tempDir();
  const ferry = await Ferry.open({ directory, random: new SeededRandom(1), log: { flush: { kind: 'per-append' } } });
  ferry.createTopic('d1');
  await ferry.produce('d1', [{ value: 'old-0' }, { value: 'old-1' }], { partition: 0 });
  const deleting = ferry.deleteTopic('d1'); // the old log closes in the background
  // Created again at once (it may have to wait until the delete is done: TopicAlreadyExists meanwhile, as in Kafka).
  let created = true;
  try {
    ferry.createTopic('d1');
  } catch (error) {
    expect((error as { kind?: string }).kind).toBe('TopicAlreadyExists');
    created = false;
  }
  const first = created ? ferry.produce('d1', [{ value: 'new-0' }], { partition: 0 }) : null;
  await deleting;
  if (!created) ferry.createTopic('d1');
  const acknowledged = [...(await (first ?? ferry.produce('d1', [{ value: 'new-0' }], { partition: 0 }))), ...(await ferry.produce('d1', [{ value: 'new-1' }, { value: 'new-2' }], { partition: 0 }))];
  expect(acknowledged.map((r) => r.offset)).toEqual([0, 1, 2]);
  expect(existsSync(join(directory, 'd1-0'))).toBe(true);
  await ferry.close();
  const again = await Ferry.open({ directory, random: new SeededRandom(2) });
  expect(values(again, 'd1')).toEqual(['new-0', 'new-1', 'new-2']);
  await again.close();
});
