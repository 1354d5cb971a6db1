// Review finding: startNewWalEpoch checks that the engine is open only as it begins. A close() that
// runs while its LIST of stored epochs is in flight completes (the directory unlocked, the logs
// closed), and then the attempt goes on: it writes the directory's writer-epoch file behind the
// closed engine, makes a fresh unfenced writer current, and resolves with a new stream the caller
// (PartitionClaims.#startNewEpoch) then publishes in this broker's record. A close during the attempt
// should end it with Closed and leave nothing behind.
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { WRITER_EPOCH_FILE } from '../../src/engine/writer-epoch.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const WRITER_ID = 'broker-1';

/** A store whose LISTs wait for `release` while `held` is set. */
class HeldListStore extends MemoryStore {
  held: Promise<void> | null = null;
  listsSeen = 0;
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    if (this.held !== null) {
      this.listsSeen++;
      await this.held;
    }
    return super.list(prefix, options);
  }
}

test('a close() during startNewWalEpoch ends the attempt: no writer epoch is taken and no stream is handed out after the close', async () => {
  const store = new HeldListStore();
  const directory = tempDir();
  const engine = await Engine.open({ directory, cluster: managedBy(), wal: { store, writerId: WRITER_ID, config: { uploadIntervalMs: 1 } }, report: () => {} });
  await engine.adoptPartition('t', idOf('t'), 0, 1, async () => {});
  await engine.produce('t', [{ value: 'a' }], { partition: 0, acks: 'all' });
  const epochFile = () => readFileSync(join(directory, WRITER_EPOCH_FILE), 'utf8').trim();
  const epochBefore = epochFile();

  let release!: () => void;
  store.held = new Promise((resolve) => (release = resolve));
  const attempt = engine.startNewWalEpoch().then(
    (stream) => ({ stream }),
    (error: unknown) => ({ error }),
  );
  while (store.listsSeen === 0) await Bun.sleep(1); // renew's LIST is in flight
  await engine.close();
  store.held = null;
  release();
  const outcome = await attempt;

  expect('error' in outcome && isFerryError(outcome.error, 'Closed')).toBe(true); // it resolves with { writerId: 'broker-1', epoch: 1 }
  expect(epochFile()).toBe(epochBefore); // 0 before, 1 written after the close
  expect(engine.wal?.failure).not.toBeNull(); // a fresh, unfenced writer is current in the closed engine
});
