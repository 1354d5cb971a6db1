// Group coordinator fencing, as an adversarial review tried to break it: suspected holes that turned out to
// be closed. Kept as passing tests so a later change that opens them fails here.
import { expect, test } from 'bun:test';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { isFerryError } from '../../../src/errors.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { GatedStore } from '../../support/gated-store.ts';

const at = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null });
const broker = (nodeId: number) => ({ nodeId, incarnation: `broker-${nodeId}` });

test('checked: a commit whose write is paused while another broker claims the group and commits is refused when it resumes', async () => {
  const gated = new GatedStore();
  const store = gated.store;
  const two = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(2));
  const one = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
  const claimTwo = await two.claim('g');
  await two.commit('g', [{ topic: 't', partition: 0, committed: at(380) }], claimTwo);
  const paused = gated.holdNext('');
  const late = two.commit('g', [{ topic: 't', partition: 0, committed: at(391) }], claimTwo).then(
    () => 'landed',
    (error: unknown) => (isFerryError(error, 'NotCoordinator') ? 'refused' : 'other'),
  );
  await paused; // broker 2 read the record (its claim) and its compare-and-swap is on the way
  const claimOne = await one.claim('g');
  await one.commit('g', [{ topic: 't', partition: 0, committed: at(396) }], claimOne);
  gated.release('');
  expect(await late).toBe('refused');
  expect((await one.list('g')).map((o) => o.committed.offset)).toEqual([396]);
});

test('checked: a claim paused between its read and its write, overtaken by a commit, keeps that commit', async () => {
  const gated = new GatedStore();
  const store = gated.store;
  const one = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(1));
  const two = new ControlOffsetStore(new ControlStore(store, 'cluster'), broker(2));
  const claimOne = await one.claim('g');
  const paused = gated.holdNext('');
  const claiming = two.claim('g');
  await paused;
  // Broker 1 commits while broker 2's claim is in flight: the claim's compare-and-swap loses, reads again.
  const committing = one.commit('g', [{ topic: 't', partition: 0, committed: at(7) }], claimOne);
  await committing;
  gated.release('');
  await claiming;
  expect((await two.list('g')).map((o) => o.committed.offset)).toEqual([7]);
});
