// Adversarial review: a remote read racing a topic's deletion and re-creation (docs/design.md
// contract 10, docs/tier-protocol.md [D2]). The test here failed when written; its comment says how.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult, ObjectStore } from '../../src/store/object-store.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A store whose GETs of tiered segments wait while `held` is set: a slow tier. */
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

// Found by review (finding 8), fixed: Ferry.fetchWithTier resolves the partition (and its topic id and high watermark)
// before it awaits the tier, and answers with what the tier returned whatever happened meanwhile:
// a topic deleted and re-created with the same name while a remote read waits on a slow tier gets
// the old incarnation's records served under the name, as offsets of the new, empty incarnation
// (Fetch up to v12 names topics, so a client cannot tell). A local read cannot race (it is
// synchronous); the remote one must check that the incarnation it read is still the one served.
test('a remote read that outlives its topic incarnation serves nothing of it', async () => {
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
  for (let i = 0; i < 4; i++)
    await ferry.produce(
      'events',
      Array.from({ length: 10 }, (_, r) => ({ value: `old ${i}/${r} `.padEnd(300, '.') })),
      { acks: 'all' },
    );
  while ((await ferry.tierer!.tierDue()) > 0);
  ferry.enforceRetention();
  expect(ferry.localLogStartOffset('events', 0)).toBeGreaterThan(0); // offset 0 is served from the tier only
  tier.hold();
  const reading = ferry.fetchWithTier('events', 0, 0).then(
    (result) => result,
    (error: unknown) => error,
  );
  await settle();
  await ferry.deleteTopic('events');
  ferry.createTopic('events', { partitions: 1 }); // a new incarnation, empty
  tier.release();
  const answer = await reading;
  const served = isFerryError(answer) ? [] : (answer as Awaited<ReturnType<Engine['fetchWithTier']>>).batches;
  expect(served.length).toBe(0);
  await ferry.close();
});
