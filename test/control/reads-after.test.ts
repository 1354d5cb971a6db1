// [C3] ReadsAfter: each caller gets a read that started at or after it asked (a check after its
// write), and callers asking at once share reads: a burst makes about two, not one per caller.
import { expect, test } from 'bun:test';
import { ReadsAfter } from '../../src/control/reads-after.ts';

/** A read whose answers the test releases one at a time; each answers the number of reads started before it. */
function gatedReads() {
  const releases: (() => void)[] = [];
  let started = 0;
  const reads = new ReadsAfter(async (_key: string) => {
    const number = ++started;
    await new Promise<void>((resolve) => releases.push(resolve));
    return number;
  });
  return { reads, releases, started: () => started };
}

test('callers that ask while a read runs share the next read, which starts once that one ended', async () => {
  const { reads, releases, started } = gatedReads();
  const first = reads.read('topics/t');
  const later = Array.from({ length: 10 }, () => reads.read('topics/t')); // asked after the first started
  expect(started()).toBe(1);
  releases.shift()!();
  expect(await first).toBe(1);
  await Bun.sleep(0);
  expect(started()).toBe(2); // one read for the ten, started after they asked
  releases.shift()!();
  expect(await Promise.all(later)).toEqual(Array.from({ length: 10 }, () => 2));
  const after = reads.read('topics/t'); // none runs: a read of its own at once
  expect(started()).toBe(3);
  releases.shift()!();
  expect(await after).toBe(3);
});

test('a caller never gets a read that started before it asked, and a failed read fails only its own callers', async () => {
  let started = 0;
  const failing = new Set([1]);
  const gates: (() => void)[] = [];
  const reads = new ReadsAfter(async (_key: string) => {
    const number = ++started;
    await new Promise<void>((resolve) => gates.push(resolve));
    if (failing.has(number)) throw new Error(`read ${number} failed`);
    return number;
  });
  const first = reads.read('k');
  const second = reads.read('k');
  const other = reads.read('another key'); // keys are apart: a read of its own
  expect(started).toBe(2);
  gates.shift()!();
  await expect(first).rejects.toThrow('read 1 failed');
  await Bun.sleep(0);
  expect(started).toBe(3); // the queued read starts after the failed one ended
  gates.shift()!();
  expect(await other).toBe(2);
  gates.shift()!();
  expect(await second).toBe(3);
});
