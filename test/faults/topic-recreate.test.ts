// Run (c) of issue 9, bounded: a topic deleted and created again, then its leader killed with
// SIGKILL. Only the last incarnation's acknowledged records may be served, at their offsets, and
// the next write lands right after them. The longer form: test/faults/topic-recreate-runs.ts.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { runTopicRecreate } from './topic-recreate-scenario.ts';

setDefaultTimeout(180_000);

test('after delete, create again and a takeover, only the new incarnation is served', async () => {
  const result = await runTopicRecreate({ seed: 9 });
  expect(result.problems).toEqual([]);
  expect(result.served).toEqual([]);
  expect(result.verdict.lost).toEqual([]);
  expect(result.nextOffset).toBe(result.highWatermark);
  expect(result.verdict.acknowledged).toBeGreaterThan(0);
});
