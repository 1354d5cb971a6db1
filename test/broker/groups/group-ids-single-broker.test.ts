// Group coordinator fencing, as an adversarial review tried to break it: single-broker mode (OffsetStore)
// and group ids with odd characters. OffsetStore keeps its groups in a plain object keyed by
// group id, so a group id that is a name of Object.prototype is no ordinary key.
import { expect, test } from 'bun:test';
import { OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { tempDir } from '../../support/temp-dir.ts';

const at = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null });

// Found by review (finding 5), fixed (pre-existing, not from 584c0ee): the group id "__proto__" (legal in Kafka: any
// string) is committed as the prototype of the store's object, not as its own key: it is served
// while the broker runs, but never written to group-offsets.msgpack, missing from groups() (so
// never expired), and lost at the next restart: the consumer starts over from its reset policy.
test('a group named __proto__ keeps its committed offsets across a restart of a single broker', async () => {
  const directory = tempDir();
  const store = OffsetStore.open(directory);
  await store.commit('__proto__', [{ topic: 't', partition: 0, committed: at(42) }]);
  expect(await store.list('__proto__')).toEqual([{ topic: 't', partition: 0, committed: at(42) }]);
  expect(await store.groups()).toEqual(['__proto__']); // fails: []
  expect(await OffsetStore.open(directory).list('__proto__')).toEqual([{ topic: 't', partition: 0, committed: at(42) }]);
});

// Not a finding (checked): other names of Object.prototype ("constructor", "toString",
// "hasOwnProperty") are own keys once committed, and listing one never committed returns nothing.
test('checked: groups named after Object.prototype methods survive a restart', async () => {
  const directory = tempDir();
  const store = OffsetStore.open(directory);
  expect(await store.list('toString')).toEqual([]);
  await store.remove('hasOwnProperty', [{ topic: 't', partition: 0, committed: at(1) }]);
  await store.commit('constructor', [{ topic: 't', partition: 0, committed: at(7) }]);
  expect(await OffsetStore.open(directory).list('constructor')).toEqual([{ topic: 't', partition: 0, committed: at(7) }]);
});
