// A group offset commit whose file write fails (finding 18, adversarial review: OS errors are
// answered per request). The single broker's OffsetStore changed its in-memory offsets before
// writing the file; when the write failed (ENOSPC, EMFILE) the client was told the commit failed
// (KAFKA_STORAGE_ERROR), yet OffsetFetch served the new offset at once, and the next commit of
// any group wrote it to disk: a commit answered "failed" took effect anyway, or vanished at the
// next restart, depending on what came next.
import { expect, test } from 'bun:test';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GROUP_OFFSETS_FILE, OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { tempDir } from '../../support/temp-dir.ts';

const committed = (offset: number) => ({ offset, leaderEpoch: 0, metadata: null, commitTimestampMs: 1 });

test('a commit whose write failed changes nothing, in memory or later on disk', async () => {
  const directory = tempDir();
  const store = OffsetStore.open(directory);
  await store.commit('g', [{ topic: 't', partition: 0, committed: committed(5) }]);

  const blocker = join(directory, `${GROUP_OFFSETS_FILE}.tmp`); // the atomic write's temporary cannot be created
  mkdirSync(blocker);
  const failure = await store.commit('g', [{ topic: 't', partition: 0, committed: committed(9) }]).then(
    () => null,
    (error: unknown) => error,
  );
  expect(failure).not.toBeNull();
  rmSync(blocker, { recursive: true });
  expect((await store.list('g')).map((o) => o.committed.offset)).toEqual([5]); // the failed commit is not served

  await store.commit('other', [{ topic: 't', partition: 0, committed: committed(1) }]); // rewrites the whole file
  expect((await OffsetStore.open(directory).list('g')).map((o) => o.committed.offset)).toEqual([5]);
});
