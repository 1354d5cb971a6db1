import { expect, test } from 'bun:test';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import { TOPICS_FILE, TopicRegistry } from '../../src/engine/topic-registry.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { isUuid } from '../../src/util/uuid.ts';
import { tempDir } from '../support/temp-dir.ts';

function kindOf(call: () => unknown): string | null {
  try {
    call();
  } catch (error) {
    return isFerryError(error) ? error.kind : 'other';
  }
  return null;
}

test("each topic gets an id at creation; a deleted topic's id is retired and never drawn again, even from the same seed", () => {
  const directory = tempDir();
  const first = TopicRegistry.open(directory, new SeededRandom(1));
  const old = first.add({ name: 'd1', partitions: 1, config: {} });
  expect(isUuid(old.id)).toBe(true);
  first.remove('d1');
  expect(first.isRetired(old.id)).toBe(true);
  // A restart with the same seed would draw the same id first: it is drawn again instead.
  const second = TopicRegistry.open(directory, new SeededRandom(1));
  const again = second.add({ name: 'd1', partitions: 1, config: {} });
  expect(again.id).not.toBe(old.id);
  expect(second.isRetired(old.id)).toBe(true);
  expect(kindOf(() => second.add({ name: 'd2', partitions: 1, config: {} }, old.id))).toBe('InvalidArgument'); // a deleted incarnation never comes back
  expect(kindOf(() => second.add({ name: 'd3', partitions: 1, config: {} }, again.id))).toBe('InvalidArgument'); // nor does a live one under another name
  expect(TopicRegistry.open(directory, new SeededRandom(2)).get('d1')).toEqual(again);
});

test('a version 1 registry (no ids) is read, each topic given an id, and saved as version 2', () => {
  const directory = tempDir();
  writeFileSync(join(directory, TOPICS_FILE), JSON.stringify({ version: 1, topics: [{ name: 'orders', partitions: 3, config: {} }] }));
  const registry = TopicRegistry.open(directory, new SeededRandom(3));
  const id = registry.get('orders')!.id;
  expect(isUuid(id)).toBe(true);
  expect(JSON.parse(readFileSync(join(directory, TOPICS_FILE), 'utf8'))).toEqual({ version: 2, topics: [{ name: 'orders', partitions: 3, config: {}, id }], retiredIds: [] });
});
