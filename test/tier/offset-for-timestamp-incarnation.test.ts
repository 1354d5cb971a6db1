// Adversarial review of 3f4c00f ("a remote read that outlives its incarnation serves nothing"):
// the check was added to Ferry.fetchWithTier only. The test here failed when written.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult, ObjectStore } from '../../src/store/object-store.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

/** How far before now the old incarnation's records are stamped: well inside retention.ms. */
const OLD_AGE_MS = 60 * 60_000;
/** Records of the new incarnation. */
const NEW_RECORDS = 5;

/** A store whose GETs of tiered segments wait while held: a slow tier. */
function slowTier(inner: MemoryStore): { store: ObjectStore; hold: () => void; release: () => void } {
  let gate: Promise<void> | null = null;
  let open: () => void = () => {};
  const get = async (key: string, options?: GetOptions): Promise<GetResult> => {
    if (key.startsWith('tier/') && gate !== null) await gate;
    return inner.get(key, options);
  };
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'get') return get;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return {
    store,
    hold: () => (gate = new Promise((resolve) => (open = resolve))),
    release: () => {
      gate = null;
      open();
    },
  };
}

// Found by review (finding 2), fixed: Ferry.offsetForWithTier (ListOffsets by timestamp, counting the tier) resolves the
// partition, awaits the tier, and answers with the tier's offset whatever happened meanwhile. A
// topic deleted and re-created under the same name while the lookup waits on a slow tier answers
// with an offset of the OLD incarnation (here past the new incarnation's log end): a consumer
// seeking by time (offsetsForTimes) lands on an offset the new log never had, or skips its
// records. The same incarnation check fetchWithTier got is missing here (and in the earliest
// branch, which awaits remote.logStartOffset).
test('a ListOffsets by timestamp that outlives its topic incarnation answers nothing of it', async () => {
  const memory = new MemoryStore();
  const tier = slowTier(memory);
  const control = new ControlStore(memory, '');
  const ferry = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 4096, localRetentionBytes: 0 },
    wal: { store: memory, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier.store, control, intervalMs: 3_600_000 },
  });
  ferry.createTopic('events', { partitions: 1 });
  const t0 = Date.now() - OLD_AGE_MS;
  for (let i = 0; i < 4; i++)
    await ferry.produce(
      'events',
      Array.from({ length: 10 }, (_, r) => ({ value: `old ${i}/${r} `.padEnd(300, '.'), timestamp: t0 + i * 10 + r })),
      { acks: 'all' },
    );
  while ((await ferry.tierer!.tierDue()) > 0);
  ferry.enforceRetention();
  expect(ferry.localLogStartOffset('events', 0)).toBeGreaterThan(0); // the old offsets are in the tier only
  tier.hold();
  const lookup = ferry.offsetForWithTier('events', 0, t0 + 25).then(
    (result) => result,
    (error: unknown) => error,
  );
  await settle();
  await ferry.deleteTopic('events');
  ferry.createTopic('events', { partitions: 1 }); // a new incarnation, with newer records only
  await ferry.produce(
    'events',
    Array.from({ length: NEW_RECORDS }, (_, r) => ({ value: `new ${r}` })),
    { acks: 'all' },
  );
  tier.release();
  const answer = await lookup;
  // Either it tells the client to ask again, or it answers within the new incarnation (its first record is newer than t0 + 25).
  if (!isFerryError(answer)) expect((answer as { offset: number }).offset).toBe(0);
  await ferry.close();
});
