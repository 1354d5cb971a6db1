// [CW1] (docs/cluster-protocol.md, "Conditional writes and ambiguous answers"): the verdict of a
// read-back after an ambiguous answer asks who wrote the object under the key, never whether its
// bytes equal ours. The store-agnostic judge every backend shares (S3Store, SimStoreView).
import { describe, expect, test } from 'bun:test';
import { authorshipOf, decodeControlRecord, encodeControlRecord } from '../../src/control/control-record.ts';
import { judge, type ConditionalWrite } from '../../src/store/conditional-write.ts';

const text = (value: string): Uint8Array => new TextEncoder().encode(value);
const notOurs = { wrote: (): boolean => false };
const ours = { wrote: (): boolean => true };

describe('[CW1] the judge asks for authorship, not bytes', () => {
  test('identical bytes under the key, but another writer wrote them (its nonce): a lost race, not our write', () => {
    const body = text('{"next":1000}');
    const replace: ConditionalWrite = { key: 'k', objectKey: 'p/k', body, ifMatch: 'e0', authorship: notOurs };
    expect(judge(replace, { body: body.slice(), etag: 'e1' })).toEqual({ landed: false, retry: false });
    const create: ConditionalWrite = { key: 'k', objectKey: 'p/k', body, ifNoneMatch: '*', authorship: notOurs };
    expect(judge(create, { body: body.slice(), etag: 'e1' })).toEqual({ landed: false, retry: false });
  });

  test('our nonce under the key: landed, whatever the bytes', () => {
    const write: ConditionalWrite = { key: 'k', objectKey: 'p/k', body: text('ours'), ifMatch: 'e0', authorship: ours };
    expect(judge(write, { body: text('as read back'), etag: 'e5' })).toEqual({ landed: true, etag: 'e5' });
  });

  test('absent, or still the version we expected: not landed, send again (authorship is not asked)', () => {
    const create: ConditionalWrite = { key: 'k', objectKey: 'p/k', body: text('x'), ifNoneMatch: '*', authorship: ours };
    expect(judge(create, null)).toEqual({ landed: false, retry: true });
    const replace: ConditionalWrite = { key: 'k', objectKey: 'p/k', body: text('x'), ifMatch: 'e0', authorship: notOurs };
    expect(judge(replace, { body: text('old'), etag: 'e0' })).toEqual({ landed: false, retry: true });
  });

  test('[CW2] a write with no authorship (its bytes name their writer: WAL objects, seals) is judged by its bytes', () => {
    const write: ConditionalWrite = { key: 'k', objectKey: 'p/k', body: text('wal object of writer A'), ifNoneMatch: '*' };
    expect(judge(write, { body: text('wal object of writer A'), etag: 'e1' })).toEqual({ landed: true, etag: 'e1' });
    expect(judge(write, { body: text('seal by writer B'), etag: 'e2' })).toEqual({ landed: false, retry: false });
  });
});

describe('[CW1] control records carry their write nonce and writer incarnation', () => {
  const first = { nonce: 'nonce-of-broker-1', incarnation: 'broker-1-process' };
  const second = { nonce: 'nonce-of-broker-2', incarnation: 'broker-2-process' };

  test("two writers' identical values are told apart by their nonce, and the judge sees the other's as a lost race", () => {
    const value = { next: 1000 };
    const mine = encodeControlRecord(value, first);
    const theirs = encodeControlRecord(value, second);
    expect(authorshipOf(first).wrote(mine)).toBe(true);
    expect(authorshipOf(first).wrote(theirs)).toBe(false);
    const write: ConditionalWrite = { key: 'producer-ids', objectKey: 'control/producer-ids', body: mine, ifMatch: 'e0', authorship: authorshipOf(first) };
    expect(judge(write, { body: theirs, etag: 'e1' })).toEqual({ landed: false, retry: false });
  });

  test('a reader sees the value alone, never the envelope; a record written before envelopes reads as it was', () => {
    const value = { next: 1000, leaderEpoch: 3 };
    expect(decodeControlRecord(encodeControlRecord(value, first))).toEqual({ value, author: first });
    expect(decodeControlRecord(text(JSON.stringify(value)))).toEqual({ value, author: null });
    expect(authorshipOf(first).wrote(text(JSON.stringify(value)))).toBe(false);
    expect(authorshipOf(first).wrote(text('not json'))).toBe(false);
  });
});
