import { describe, expect, test } from 'bun:test';
import { FileStore } from '../../src/store/file.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { MultipartUpload, ObjectStore } from '../../src/store/object-store.ts';
import { StreamingUpload, STREAMING_PART_BYTES_DEFAULT } from '../../src/store/streaming-upload.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { tempDir } from '../support/temp-dir.ts';
import { listAll, patternBytes, storeErrorOf } from './contract.ts';

const PART = 1000;

function smallPartStore(): MemoryStore {
  return new MemoryStore({ multipartPartBytesMin: PART });
}

/** `total` bytes cut into chunks of `chunkBytes`. */
function chunksOf(total: number, chunkBytes: number, seed = 1): Uint8Array[] {
  const bytes = patternBytes(total, seed);
  const chunks: Uint8Array[] = [];
  for (let at = 0; at < total; at += chunkBytes) chunks.push(bytes.subarray(at, Math.min(total, at + chunkBytes)));
  return chunks;
}

/** A store whose part uploads wait until the test releases them, to watch what is in flight. */
class GatedStore {
  readonly inner: MemoryStore = smallPartStore();
  readonly waiting: (() => void)[] = [];
  inFlight = 0;
  inFlightMax = 0;

  get store(): ObjectStore {
    return new Proxy(this.inner, {
      get: (target, name) => (name === 'createMultipartUpload' ? (key: string) => this.#gated(key) : Reflect.get(target, name, target)?.bind(target)),
    });
  }

  releaseOne(): void {
    this.waiting.shift()?.();
  }

  async #gated(key: string): Promise<MultipartUpload> {
    const upload = await this.inner.createMultipartUpload(key);
    return {
      ...upload,
      key: upload.key,
      uploadId: upload.uploadId,
      uploadPart: async (partNumber, body) => {
        this.inFlight++;
        this.inFlightMax = Math.max(this.inFlightMax, this.inFlight);
        await new Promise<void>((resolve) => this.waiting.push(resolve));
        this.inFlight--;
        return upload.uploadPart(partNumber, body);
      },
      complete: (parts) => upload.complete(parts),
      abort: () => upload.abort(),
    };
  }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StreamingUpload', () => {
  test('the default part size meets S3 minimum', () => {
    expect(STREAMING_PART_BYTES_DEFAULT).toBe(8 * 1024 * 1024);
  });

  test('an object that fits one part is a single put, honouring ifNoneMatch', async () => {
    const store = smallPartStore();
    const upload = new StreamingUpload(store, 'small', { partBytes: PART });
    for (const chunk of chunksOf(PART, 300)) await upload.write(chunk);
    const { etag } = await upload.finish();
    expect(store.stats().requests).toMatchObject({ put: 1, multipartCreate: 0, uploadPart: 0, multipartComplete: 0 });
    expect(await store.head('small')).toEqual({ key: 'small', size: PART, etag });
    expect((await store.get('small')).body).toEqual(concatBytes(chunksOf(PART, 300)));
    const again = new StreamingUpload(store, 'small', { partBytes: PART, ifNoneMatch: '*' });
    await again.write(new Uint8Array(10));
    await storeErrorOf(again.finish(), 'PreconditionFailed');
    expect((await store.head('small'))?.size).toBe(PART);
  });

  test('an empty object is an empty put', async () => {
    const store = smallPartStore();
    await new StreamingUpload(store, 'empty').finish();
    expect((await store.head('empty'))?.size).toBe(0);
  });

  test('parts go up while data still arrives, before finish is called', async () => {
    const store = smallPartStore();
    const upload = new StreamingUpload(store, 'big', { partBytes: PART, concurrency: 2 });
    const chunks = chunksOf(5 * PART + 1, 250);
    for (const chunk of chunks) await upload.write(chunk);
    await tick();
    expect(store.stats().requests.multipartCreate).toBe(1);
    expect(store.stats().requests.uploadPart).toBe(5);
    expect(await store.head('big')).toBeNull();
    await upload.finish();
    expect(store.stats().requests).toMatchObject({ put: 0, uploadPart: 6, multipartComplete: 1, multipartAbort: 0 });
    expect((await store.get('big')).body).toEqual(concatBytes(chunks));
    expect(store.pendingUploadCount()).toBe(0);
  });

  test('write waits while every slot is busy, and memory stays within (concurrency + 1) parts', async () => {
    const gate = new GatedStore();
    const upload = new StreamingUpload(gate.store, 'gated', { partBytes: PART, concurrency: 2 });
    const chunks = chunksOf(6 * PART + 10, 250);
    let written = 0;
    const writer = (async () => {
      for (const chunk of chunks) {
        await upload.write(chunk);
        written++;
      }
    })();
    for (let i = 0; i < 20; i++) await tick();
    // Two parts in flight (8 chunks) and one more part pending (4 chunks); the 13th chunk must wait.
    expect(gate.inFlight).toBe(2);
    expect(written).toBe(12);
    gate.releaseOne();
    for (let i = 0; i < 20; i++) await tick();
    expect(written).toBe(16);
    while (written < chunks.length || gate.waiting.length > 0) {
      gate.releaseOne();
      await tick();
    }
    await writer;
    const finishing = upload.finish();
    while (gate.inner.stats().requests.multipartComplete === 0) {
      gate.releaseOne();
      await tick();
    }
    await finishing;
    expect(gate.inFlightMax).toBe(2);
    expect(upload.bufferedBytesMax).toBeLessThanOrEqual(3 * PART);
    expect((await gate.inner.get('gated')).body).toEqual(concatBytes(chunks));
  });

  test('parts made of one chunk are views; parts spanning chunks are copied once', async () => {
    const store = smallPartStore();
    const whole = new StreamingUpload(store, 'views', { partBytes: PART });
    await whole.write(patternBytes(3 * PART + 500));
    await whole.finish();
    expect(whole.copiedBytes).toBe(0);
    const pieces = new StreamingUpload(store, 'copies', { partBytes: PART });
    for (const chunk of chunksOf(3 * PART + 500, 300)) await pieces.write(chunk);
    await pieces.finish();
    expect(pieces.copiedBytes).toBe(3 * PART + 500);
    expect(pieces.partsStarted).toBe(4);
  });

  test('a failed part aborts the upload: nothing visible, nothing pending', async () => {
    const store = smallPartStore();
    store.injectFault({ operation: 'uploadPart', kind: 'Unavailable' });
    const upload = new StreamingUpload(store, 'doomed', { partBytes: PART });
    const attempt = (async () => {
      for (const chunk of chunksOf(4 * PART, 500)) await upload.write(chunk);
      return upload.finish();
    })();
    await storeErrorOf(attempt, 'Unavailable');
    expect(await store.head('doomed')).toBeNull();
    expect((await listAll(store, '')).keys).toEqual([]);
    expect(store.pendingUploadCount()).toBe(0);
    expect(store.stats().requests.multipartAbort).toBe(1);
    // Once failed, it stays failed with the first error.
    await storeErrorOf(upload.write(new Uint8Array(1)), 'Unavailable');
  });

  test('a failed completion (ifNoneMatch on an existing key) aborts and keeps the old object', async () => {
    const store = smallPartStore();
    await store.put('taken', new TextEncoder().encode('old'));
    const upload = new StreamingUpload(store, 'taken', { partBytes: PART, ifNoneMatch: '*' });
    await upload.write(patternBytes(2 * PART + 1));
    await storeErrorOf(upload.finish(), 'PreconditionFailed');
    expect(new TextDecoder().decode((await store.get('taken')).body)).toBe('old');
    expect(store.pendingUploadCount()).toBe(0);
  });

  test('abort by the caller discards the parts', async () => {
    const store = smallPartStore();
    const upload = new StreamingUpload(store, 'dropped', { partBytes: PART });
    await upload.write(patternBytes(3 * PART));
    await upload.abort();
    expect(await store.head('dropped')).toBeNull();
    expect(store.pendingUploadCount()).toBe(0);
  });

  test('works over the file store too', async () => {
    const store = await FileStore.open(tempDir(), { multipartPartBytesMin: PART });
    const upload = new StreamingUpload(store, 'wal/0001', { partBytes: PART, ifNoneMatch: '*' });
    const chunks = chunksOf(4 * PART + 123, 777);
    for (const chunk of chunks) await upload.write(chunk);
    await upload.finish();
    expect((await store.get('wal/0001')).body).toEqual(concatBytes(chunks));
    await store.close();
  });

  test('bad options are refused', () => {
    const store = smallPartStore();
    expect(() => new StreamingUpload(store, 'k', { partBytes: 0 })).toThrow(/partBytes/);
    expect(() => new StreamingUpload(store, 'k', { concurrency: 0 })).toThrow(/concurrency/);
  });
});
