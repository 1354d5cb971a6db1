import { FerryError } from '../errors.ts';
import { isStoreError } from './errors.ts';
import type { ObjectStore } from './object-store.ts';

/**
 * Whether an object store really enforces conditional writes, checked before a broker relies on
 * them. WAL streams are fenced by create-if-absent (`If-None-Match: *`, docs/wal-protocol.md) and
 * cluster control records change by compare-and-swap (`If-Match`); many S3-compatible servers
 * (s3rver among them) accept both headers and ignore them, and on such a store fencing and
 * compare-and-swap would hold only by luck. The probe, on one key of its own:
 *   1. create it with If-None-Match: *             -> must succeed;
 *   2. create it again with If-None-Match: *       -> must fail PreconditionFailed;
 *   3. the same as a one-part multipart upload      -> its completion must not succeed (a WAL
 *      writer streams large objects so, src/wal/writer.ts [W3], and some servers honour the
 *      condition on PutObject only; a store that refuses conditional multipart uploads outright
 *      is safe: the writer falls back to a plain conditional PUT);
 *   4. replace it with If-Match: a wrong ETag      -> must fail PreconditionFailed;
 *   5. replace it with If-Match: its ETag          -> must succeed;
 *   6. delete it (also after a failed step).
 * Any other failure (no access, no network) propagates as it is: the broker could not start anyway.
 */
export async function checkConditionalWrites(store: ObjectStore, prefix: string, probeId: string, role: string): Promise<void> {
  const key = `${prefix === '' ? '' : `${prefix.replace(/\/+$/, '')}/`}conditional-write-check/${probeId}`;
  const refuse = (what: string): never => {
    throw new FerryError(
      'InvalidArgument',
      `the ${role} store (${store.kind}) does not enforce conditional writes: ${what}; fencing and compare-and-swap need them (--unsafe-store runs a single broker on it anyway)`,
    );
  };
  try {
    const created = await store.put(key, bytes('1'), { ifNoneMatch: '*' });
    if (await succeeds(store.put(key, bytes('2'), { ifNoneMatch: '*' }))) refuse('a second put with If-None-Match: * succeeded');
    if (
      await completeOnePart(store, key, bytes('2')).then(
        () => true,
        () => false,
      )
    )
      refuse('a multipart upload with If-None-Match: * completed over an existing object');
    if (await succeeds(store.put(key, bytes('3'), { ifMatch: '"ferry-not-this-etag"' }))) refuse('a put with If-Match on a wrong ETag succeeded');
    const current = await store.head(key);
    if (current?.etag !== created.etag) refuse('a refused conditional put changed the object');
    await store.put(key, bytes('4'), { ifMatch: created.etag });
  } finally {
    await store.delete(key).catch(() => {}); // a probe left behind is harmless: nothing reads this key
  }
}

/** A multipart upload of one (last, so small) part, created with If-None-Match: *; aborted if its completion fails. */
async function completeOnePart(store: ObjectStore, key: string, body: Uint8Array): Promise<void> {
  const upload = await store.createMultipartUpload(key, { ifNoneMatch: '*' });
  try {
    await upload.complete([await upload.uploadPart(1, body)]);
  } catch (error) {
    await upload.abort().catch(() => {});
    throw error;
  }
}

/** True if the put succeeded, false if its condition failed; any other failure propagates. */
async function succeeds(put: Promise<unknown>): Promise<boolean> {
  try {
    await put;
    return true;
  } catch (error) {
    if (isStoreError(error, 'PreconditionFailed')) return false;
    throw error;
  }
}

function bytes(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}
