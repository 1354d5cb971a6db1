// docs/tier-protocol.md [D4], end to end: a follower cut off from the leader's WAL stream long
// enough for WAL GC to collect its next objects (they are tiered) leaves its tail and follows the
// partition again from the tier's end and the stream's floor, and ends byte-identical to the leader.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, ObjectStore } from '../../src/store/object-store.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { systemClock } from '../../src/util/clock.ts';
import { startTieredBroker } from '../support/tiered-brokers.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

/** `store` as one broker sees it: while `blind`, the WAL objects under `prefix` look absent to it (it is cut off from them). */
function blindable(store: MemoryStore, prefix: string): { view: ObjectStore; setBlind(blind: boolean): void } {
  let blind = false;
  const view = new Proxy(store, {
    get: (target, name) => {
      if (name === 'get') {
        return (key: string, options?: GetOptions) => (blind && key.startsWith(prefix) ? Promise.reject(new StoreError('NotFound', 'injected: cut off', { key })) : target.get(key, options));
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { view, setBlind: (value) => void (blind = value) };
}

function hex(broker: Broker, from: number): string[] {
  const engine = broker.context.engine;
  const out: string[] = [];
  for (let at = from; at < engine.logEndOffset('t', 0); ) {
    const { batches } = engine.fetch('t', 0, at);
    if (batches.length === 0) break; // at the high watermark
    for (const batch of batches) out.push(Buffer.from(batch.bytes).toString('hex'));
    at = batches.at(-1)!.lastOffset + 1;
  }
  return out;
}

test('a follower whose next WAL objects were collected while it was cut off follows again from the tier and ends byte-identical', async () => {
  const store = new MemoryStore();
  const cutOff = blindable(store, 'wal/broker-1/');
  const leader = await startTieredBroker(store, 1, running);
  await leader.context.topology.createTopic('t', 1, 2);
  await until(() => leader.context.engine.leads('t', 0), 'broker 1 to lead');
  const follower = await startTieredBroker(cutOff.view, 2, running);
  const engine = leader.context.engine;
  const produce = async (count: number) => {
    for (let i = 0; i < count; i++) await (await engine.appendBatches('t', 0, buildRecordBatch([{ value: `v${engine.logEndOffset('t', 0)}`.padEnd(200, '.') }], { nowMs: Date.now() }))).committed;
  };
  await produce(5);
  await until(() => follower.context.engine.serves('t', 0) && follower.context.engine.logEndOffset('t', 0) === 5, 'broker 2 to follow');

  cutOff.setBlind(true);
  await produce(30);
  while ((await engine.tierer!.tierDue()) > 0);
  const topicId = engine.topics()[0]!.id;
  const tieredEnd = engine.tierer!.tieredEndOf(topicId, 0)!;
  expect(tieredEnd).toBeGreaterThan(10);
  // WAL GC [G4]: the leader's objects whose every frame is below the tier's end, oldest first.
  const stream = engine.wal!.config.stream;
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => false }, { clock: systemClock, random: new SeededRandom(1) });
  let collected = 0;
  for (; ; collected++) {
    const index = await reader.readIndex(stream, collected);
    if (index.kind !== 'data' || index.entries.some((entry) => entry.topicId === topicId && entry.lastOffset >= tieredEnd)) break;
    if (index.entries.length > 0) await store.delete(walObjectKey('', stream, collected));
    else break;
  }
  expect(collected).toBeGreaterThan(6); // past the follower's position
  cutOff.setBlind(false);

  await until(() => follower.context.engine.serves('t', 0) && follower.context.engine.logEndOffset('t', 0) === 35, 'broker 2 to follow again from the tier', 30_000);
  await produce(2);
  await until(() => follower.context.engine.logEndOffset('t', 0) === 37, 'broker 2 to go on tailing');
  await until(() => hex(follower, tieredEnd).length === 37 - tieredEnd, "the follower's high watermark to reach its end");
  expect(hex(follower, tieredEnd)).toEqual(hex(leader, tieredEnd));
});
