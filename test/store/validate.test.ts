import { describe, expect, test } from 'bun:test';
import { isStoreError } from '../../src/store/errors.ts';
import { MULTIPART_PART_BYTES_MAX } from '../../src/store/object-store.ts';
import { checkKey, checkPartBody, checkPartList, checkPartSizes, checkPutOptions, resolveRange } from '../../src/store/validate.ts';

function errorOf(action: () => unknown): { kind: string; key: string | undefined; message: string } {
  try {
    action();
  } catch (error) {
    if (isStoreError(error)) return { kind: error.kind, key: error.key, message: error.message };
    throw error;
  }
  throw new Error('expected a StoreError');
}

describe('input checks shared by every backend', () => {
  test('keys: empty, too long, lone surrogates', () => {
    expect(errorOf(() => checkKey(''))).toMatchObject({ kind: 'InvalidArgument', message: expect.stringMatching(/non-empty/) });
    const long = 'x'.repeat(1025);
    expect(errorOf(() => checkKey(long))).toMatchObject({ kind: 'InvalidArgument', key: long, message: expect.stringMatching(/1025 bytes.*1024/) });
    expect(errorOf(() => checkKey('a\uD800b')).message).toMatch(/surrogate/);
    checkKey('x'.repeat(1024));
    checkKey('日'.repeat(341)); // 1023 bytes
  });

  test('an oversize part names its number, its size and the limit', () => {
    const huge = { length: MULTIPART_PART_BYTES_MAX + 1 } as Uint8Array; // no 5 GiB allocation needed
    expect(errorOf(() => checkPartBody('k', 7, huge))).toMatchObject({
      kind: 'InvalidArgument',
      key: 'k',
      message: expect.stringMatching(/part 7 is 5368709121 bytes, more than S3's limit of 5368709120/),
    });
  });

  test('part lists and sizes', () => {
    const part = (partNumber: number) => ({ partNumber, etag: 'e', size: 1 });
    expect(errorOf(() => checkPartList('k', [part(2), part(1)])).message).toMatch(/ascending/);
    expect(errorOf(() => checkPartList('k', [])).message).toMatch(/at least one part/);
    expect(
      errorOf(() =>
        checkPartSizes(
          'k',
          [
            { partNumber: 1, size: 4 },
            { partNumber: 2, size: 1 },
          ],
          5,
        ),
      ).message,
    ).toMatch(/part 1 is 4 bytes; every part but the last must be at least 5/);
    checkPartSizes(
      'k',
      [
        { partNumber: 1, size: 5 },
        { partNumber: 2, size: 1 },
      ],
      5,
    );
  });

  test('put options and ranges', () => {
    expect(errorOf(() => checkPutOptions('k', { ifNoneMatch: '*', ifMatch: 'e' })).message).toMatch(/cannot be combined/);
    expect(errorOf(() => checkPutOptions('k', { ifMatch: '' })).message).toMatch(/non-empty ETag/);
    expect(resolveRange('k', { start: 5, end: 100 }, 10)).toEqual({ start: 5, end: 10 });
    expect(resolveRange('k', undefined, 10)).toEqual({ start: 0, end: 10 });
    expect(errorOf(() => resolveRange('k', { start: 10 }, 10)).message).toMatch(/start 10 is not below the object's size 10/);
  });
});
