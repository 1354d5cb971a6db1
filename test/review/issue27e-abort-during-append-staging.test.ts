import { expect, test } from 'bun:test';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { DirectWrites } from '../../src/store/direct-write.ts';
import { FileSequentialWrite, type FileSequentialWriteHost } from '../../src/store/file-sequential-write.ts';
import { systemFileSync } from '../../src/util/file-sync.ts';
import { tempDir } from '../support/temp-dir.ts';
import { patternBytes } from '../store/contract.ts';

/**
 * SequentialWrite.abort() is allowed at any time (the interface restricts only overlapping appends;
 * StreamingUpload.abort() calls it while a write()'s append is under way). FileSequentialWrite.abort
 * does not wait for the append in flight: it closes the DirectAppender, which gives its staging
 * buffer back to the pool at once, while the append's direct write is still in flight. When that
 * write completes, the append resumes and runs `copyWithin` / `set` on the staging buffer, which a
 * concurrent put of the same size class (1 MiB) has taken meanwhile: the put publishes bytes that
 * are not its own.
 *
 * Device latency is emulated deterministically: the appender's direct write is issued for real but
 * its completion is held until the put's write is about to be issued; the put's write then waits a
 * few ms (its pwrite not yet reached in the thread pool) before the real write.
 */
test("a put does not publish another (aborted) sequential write's staged bytes", async () => {
  const dir = tempDir();
  const appendPath = join(dir, 'sequential.tmp');
  const putPath = join(dir, 'put.tmp');
  let releaseAppend: () => void = () => undefined;
  const appendCompletes = new Promise<void>((resolve) => (releaseAppend = resolve));

  const direct = new DirectWrites(async (path, flags, mode) => {
    const handle: FileHandle = await open(path, flags, mode);
    const realWrite = handle.write.bind(handle) as (...args: unknown[]) => Promise<{ bytesWritten: number; buffer: Uint8Array }>;
    if (path === appendPath) {
      (handle as unknown as { write: unknown }).write = async (...args: unknown[]) => {
        const result = await realWrite(...args); // in the device...
        await appendCompletes; // ...and acknowledged late
        return result;
      };
    } else if (path === putPath) {
      (handle as unknown as { write: unknown }).write = async (...args: unknown[]) => {
        releaseAppend();
        await new Promise((resolve) => setTimeout(resolve, 20));
        return realWrite(...args);
      };
    }
    return handle;
  });

  const host: FileSequentialWriteHost = {
    run: (_class, _bytes, _what, action) => action(),
    publish: async () => true,
    sync: false,
    files: systemFileSync,
    direct,
  };
  const sequential = await FileSequentialWrite.create('tier/segment', host, appendPath);
  const appending = sequential.append([patternBytes(200_000, 7)]).catch((error: unknown) => error);
  const aborting = sequential.abort(); // the caller gives up while the append is in flight

  const body = patternBytes(800_000, 11); // size class 1 MiB: the class of the appender's staging
  expect(await direct.write(putPath, [body], false, systemFileSync)).toBe(true);
  await aborting;
  await appending;

  const written = new Uint8Array(await Bun.file(putPath).arrayBuffer());
  expect(written.length).toBe(body.length);
  expect(Buffer.from(written).equals(Buffer.from(body))).toBe(true);
});
