// Review (27b, commit 6f5c2d4): the WAL writer streams a large open object [W3] through
// StreamingUpload, which on the file store is now a sequential write: an open file handle and a
// temporary file in the store's tmp/. When the writer fails or is fenced [W6], #fail drops the open
// object (`this.#open = null`) without finishing or aborting its stream: the file handle stays open
// in the broker and the temporary file stays in tmp/ until a store opened an hour later sweeps it.
// (Older, same class: on the multipart path the dropped stream left a multipart upload nobody
// aborted.) Fix: #fail aborts the open object's stream (`void open.streaming?.abort()`).
import { expect, test } from 'bun:test';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../src/store/file.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const MiB = 1024 * 1024;
const STREAM = { writerId: 'leader-1', epoch: 1 };

test('a WAL writer fenced while a large object streams into the file store leaves no temporary file', async () => {
  const root = tempDir();
  const store = await FileStore.open(root);
  const config = {
    ...DEFAULT_WAL_WRITER_CONFIG,
    uploadBytes: 16 * MiB,
    uploadIntervalMs: 60_000,
    multipartPartBytes: 5 * MiB,
    maxBufferedBytes: 64 * MiB,
    retry: { attempts: 3, baseMs: 1, capMs: 5 },
    prefix: 'cluster',
    stream: STREAM,
  };
  const wal = new WalWriter(store, config, { clock: new ManualClock(), random: new SeededRandom(1) });
  const frame = (offset: number, valueBytes: number) => ({
    topic: 't',
    topicId: idOf('t'),
    partition: 0,
    leaderEpoch: 0,
    baseOffset: offset,
    lastOffset: offset,
    data: batchOf(`f${offset}`, 1, 0, valueBytes),
  });
  const first = wal.append(frame(0, 10));
  await wal.flush();
  await first;
  await sealStream(store, 'cluster', STREAM, { writerId: 'leader-2', nowMs: 0 }); // a successor seals at sequence 1
  const acknowledged: Promise<unknown>[] = [wal.append(frame(1, 10))];
  const flushed = wal.flush().catch(() => undefined); // object 1 goes up, and meets the seal
  for (let offset = 2; offset < 8; offset++) acknowledged.push(wal.append(frame(offset, MiB - 200))); // object 2, open, streams
  await Promise.allSettled(acknowledged);
  await flushed;
  await settle();
  await Bun.sleep(50);
  expect(wal.durableOffset(idOf('t'), 0)).toBe(1); // fenced: nothing above the seal acknowledged
  expect(store.stats().requests.multipartCreate).toBe(1); // object 2 did stream
  // Fails: the dropped stream's temporary file (and its open handle) stay.
  expect(readdirSync(join(root, 'tmp'))).toEqual([]);
  await store.close();
});
