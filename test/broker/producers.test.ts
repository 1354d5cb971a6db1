import { expect, test } from 'bun:test';
import { ProducerIds } from '../../src/broker/producers.ts';
import { tempDir } from '../support/temp-dir.ts';

test('pipelined batches: the next sequence is accepted before the previous append settles', () => {
  const producers = new ProducerIds(tempDir(), 3);
  const first = producers.check('t/0', 7, 0, 0, 5);
  expect(first.kind).toBe('append');
  expect(producers.check('t/0', 7, 0, 5, 5).kind).toBe('append'); // pipelined: checked against the reserved first batch
  expect(producers.check('t/0', 7, 0, 0, 5).kind).toBe('in-flight'); // a retry of the first while it is still appending
  if (first.kind === 'append') first.reservation.settle(100);
  expect(producers.check('t/0', 7, 0, 0, 5)).toEqual({ kind: 'duplicate', baseOffset: 100 });
  expect(producers.check('t/0', 7, 0, 20, 1)).toEqual({ kind: 'out-of-order', expected: 10 });
  expect(producers.check('t/0', 7, -1, 10, 1).kind).toBe('fenced-epoch');
});

test('a failed append gives its sequences back', () => {
  const producers = new ProducerIds(tempDir());
  const check = producers.check('t/0', 1, 0, 0, 3);
  if (check.kind === 'append') check.reservation.undo();
  expect(producers.check('t/0', 1, 0, 0, 3).kind).toBe('append');
});

test('ids are unique per broker and survive a restart without reuse', () => {
  const directory = tempDir();
  const a = new ProducerIds(directory, 1);
  const first = [a.allocate(), a.allocate()];
  const again = new ProducerIds(directory, 1).allocate();
  expect(first[0]).toBe(2 ** 32);
  expect(again).toBeGreaterThan(first[1]!);
  expect(new ProducerIds(tempDir(), 2).allocate()).toBe(2 * 2 ** 32);
});
