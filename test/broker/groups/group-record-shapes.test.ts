// Group coordinator fencing, as an adversarial review tried to break it: the group record's shape. The
// record changed from a flat map of offsets by "topic/partition" to { coordinator, offsets };
// groupRecordOf tells the two apart by whether any top-level key contains '/'.
import { expect, test } from 'bun:test';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';

const at = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null });
const broker = (nodeId: number) => ({ nodeId, incarnation: `broker-${nodeId}` });

// Found by review (finding 1), fixed: a record holding both shapes (what a broker still on the code before 584c0ee writes
// during a rolling restart: it spreads the record it read and adds "t/1" at the top level) is
// taken for the old shape whole. Every offset nested under `offsets` disappears from list (so
// from OffsetFetch: the consumer resets to auto.offset.reset), "coordinator" and "offsets" are
// listed as partitions named "coordinato"/"offset" with partition NaN, and the next claim writes
// that garbage back as the group's offsets.
test('offsets nested in a new-shape record survive a flat key written beside them', async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, 'cluster');
  const one = new ControlOffsetStore(control, broker(1));
  const claim = await one.claim('g');
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(396) }], claim);
  // A broker on the previous code commits t/1: { ...current.value, 't/1': offset } (its ControlOffsetStore.commit).
  const current = await control.read<Record<string, unknown>>('groups/g');
  expect(await control.replace('groups/g', current!, { ...current!.value, 't/1': at(7) })).not.toBeNull();

  const listed = (await one.list('g')).map((o) => [o.topic, o.partition, o.committed.offset]);
  expect(listed).toContainEqual(['t', 0, 396]); // fails: t/0 is hidden inside the entry "offsets"
  expect(listed.every(([, partition]) => Number.isInteger(partition))).toBe(true);
});

// Found by review (finding 2), fixed: a claim rewrites the record as exactly { coordinator, offsets }: any other field the
// record holds (one a newer version adds, or any future group metadata) is lost on the first
// claim by any broker, although #change (commit, remove) keeps them with { ...record, offsets }.
test("a claim keeps the group record's other contents", async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, 'cluster');
  const one = new ControlOffsetStore(control, broker(1));
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(5) }], await one.claim('g'));
  const current = await control.read<Record<string, unknown>>('groups/g');
  await control.replace('groups/g', current!, { ...current!.value, protocolType: 'consumer' }); // a field this code does not know

  const two = new ControlOffsetStore(control, broker(2));
  await two.claim('g'); // broker 2 takes the group
  const after = await control.read<Record<string, unknown>>('groups/g');
  expect(after!.value.protocolType).toBe('consumer'); // fails: the claim wrote { coordinator, offsets } only
});

// Not a finding (checked): a flat record of the old shape is read and claimed without loss, even
// with a topic named "offsets" or "coordinator" (its keys are "offsets/0", which contain '/').
test('checked: an old flat record with topics named offsets and coordinator keeps every offset when claimed', async () => {
  const store = new MemoryStore();
  const control = new ControlStore(store, 'cluster');
  await control.create('groups/g', { 'offsets/0': at(1), 'coordinator/2': at(2) });
  const one = new ControlOffsetStore(control, broker(1));
  const claim = await one.claim('g');
  await one.commit('g', [{ topic: 'offsets', partition: 1, committed: at(3) }], claim);
  const listed = (await one.list('g')).map((o) => `${o.topic}/${o.partition}=${o.committed.offset}`).sort();
  expect(listed).toEqual(['coordinator/2=2', 'offsets/0=1', 'offsets/1=3']);
});
