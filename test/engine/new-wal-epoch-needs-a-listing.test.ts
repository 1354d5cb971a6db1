// A managed engine's new writer epoch after a fence ([C7]) must lie past every epoch of its writer
// id in the store: another process under the same id (a replacement started while this one was
// paused) may have written epochs this directory never heard of, and a reused stream id is taken
// for a fresh stream by a takeover (docs/cluster-protocol.md L7). When the LIST that finds them
// fails, the epoch is unknown: the attempt fails, and the caller's retry (the next scan) picks it.
// Failed when written: the failed LIST was taken for an empty store, and the new writer reused
// the other process's epoch 1.
import { expect, test } from 'bun:test';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const WRITER_ID = 'broker-1';

async function openManaged(store: MemoryStore, report: (line: string) => void = () => {}): Promise<Engine> {
  const engine = await Engine.open({ directory: tempDir(), cluster: managedBy(), wal: { store, writerId: WRITER_ID, config: { uploadIntervalMs: 1 } }, report });
  await engine.adoptPartition('t', idOf('t'), 0, 1, async () => {});
  return engine;
}

/** What `promise` rejects with; null when it resolves. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

/** What `promise` resolves or rejects with. */
async function outcome(promise: Promise<unknown>): Promise<unknown> {
  return promise.catch((error: unknown) => error);
}

test("a new writer epoch is never guessed: a failed LIST fails the attempt, and the retry lands past the other process's epochs", async () => {
  const store = new MemoryStore();
  const lines: string[] = [];
  const paused = await openManaged(store, (line) => lines.push(line));
  await paused.produce('t', [{ value: 'a' }], { partition: 0, acks: 'all' }); // epoch 0 in the store
  // The replacement under the same writer id: it seals epoch 0 ([F]) and writes epoch 1.
  const replacement = await openManaged(store);
  await replacement.produce('t', [{ value: 'b' }], { partition: 0, acks: 'all' });
  expect(replacement.wal!.config.stream.epoch).toBe(1);
  // The paused one wakes: its next upload meets the seal, so its writer is fenced.
  expect(isFerryError(await rejection(paused.produce('t', [{ value: 'c' }], { partition: 0, acks: 'all' })), 'Fenced')).toBe(true);

  store.injectFault({ operation: 'list', kind: 'Unavailable', keyPrefix: `wal/${WRITER_ID}/` });
  const failed = await outcome(paused.startNewWalEpoch());
  expect(failed).not.toEqual({ writerId: WRITER_ID, epoch: 1 }); // the replacement's stream, reused
  expect(isFerryError(failed, 'Storage')).toBe(true);
  expect((failed as Error).message).not.toContain('\n');
  // Between the attempts: nothing is led (or acknowledged) through the fenced writer.
  expect(paused.serves('t', 0)).toBe(false);
  expect(await rejection(paused.produce('t', [{ value: 'd' }], { partition: 0, acks: 'all' }))).not.toBeNull();

  const stream = await paused.startNewWalEpoch();
  expect(stream).toEqual({ writerId: WRITER_ID, epoch: 2 }); // past the replacement's 1
  expect(lines.filter((line) => line.includes(`WAL writer ${WRITER_ID} epoch 0 fenced`)).length).toBe(1);
  await paused.close();
  await replacement.close();
});
