// Damage at rest in the tier, for tests of what a reader does with it.
import { ControlStore } from '../../src/control/control-store.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { tieredSegmentKey } from '../../src/tier/keys.ts';
import { copiedSegments, TierRecords } from '../../src/tier/tier-record.ts';
import type { Uuid } from '../../src/util/uuid.ts';

/**
 * Flips the first byte of the producers section of partition 0's last tiered segment in `store`
 * (tier records under `control` in the same store, segment objects under `prefix`), so every later
 * read gets it; returns the object's key.
 */
export async function corruptLastProducers(store: ObjectStore, topicId: Uuid, prefix = '', control = ''): Promise<string> {
  const records = new TierRecords(new ControlStore(store, control));
  const last = copiedSegments(await records.read(topicId, 0)).at(-1)!;
  const key = tieredSegmentKey(prefix, topicId, 0, last.baseOffset, last.endOffset, last.uploadId);
  const body = (await store.get(key)).body.slice();
  body[last.sections.producers!.position]! ^= 0xff;
  await store.put(key, body);
  return key;
}
