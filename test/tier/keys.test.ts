import { describe, expect, test } from 'bun:test';
import { parseTieredSegmentKey, tieredPartitionPrefix, tieredSegmentKey } from '../../src/tier/keys.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid } from '../../src/util/uuid.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { idOf } from '../support/topic-ids.ts';

const TOPIC = idOf('orders');
const UPLOAD = randomUuid(new SeededRandom(11));

describe('tiered segment keys', () => {
  test('the layout of the protocol, offsets padded to 20 digits', () => {
    expect(tieredSegmentKey('', TOPIC, 3, 100, 250, UPLOAD)).toBe(`tier/${TOPIC}/3/00000000000000000100-00000000000000000250-${UPLOAD}.seg`);
    expect(tieredSegmentKey('cluster-a/', TOPIC, 0, 0, 1, UPLOAD)).toBe(`cluster-a/tier/${TOPIC}/0/00000000000000000000-00000000000000000001-${UPLOAD}.seg`);
    expect(tieredSegmentKey('x', TOPIC, 3, 1, 2, UPLOAD).startsWith(tieredPartitionPrefix('x', TOPIC, 3))).toBe(true);
  });

  test('keys round trip for seeded random fields and prefixes', () => {
    const random = new SeededRandom(7);
    const prefixes = ['', 'a', 'a/b', 'tier', 'deep/tier/prefix'];
    for (let i = 0; i < 500; i++) {
      const baseOffset = random.nextInt(2) === 0 ? random.nextInt(1000) : Math.floor((random.next() * Number.MAX_SAFE_INTEGER) / 2);
      const fields = {
        prefix: prefixes[random.nextInt(prefixes.length)]!,
        topicId: randomUuid(random),
        partition: random.nextInt(2) === 0 ? random.nextInt(10) : 0x7fff_ffff - random.nextInt(10),
        baseOffset,
        endOffset: baseOffset + 1 + random.nextInt(1_000_000),
        uploadId: randomUuid(random),
      };
      const key = tieredSegmentKey(fields.prefix, fields.topicId, fields.partition, fields.baseOffset, fields.endOffset, fields.uploadId);
      expect(parseTieredSegmentKey(key)).toEqual(fields);
    }
  });

  test('anything else is not a tiered segment key', () => {
    const key = tieredSegmentKey('p', TOPIC, 3, 100, 250, UPLOAD);
    const rejected = [
      '',
      key.replace('.seg', ''),
      `${key}x`,
      key.replace('/3/', '/03/'),
      key.replace('/3/', '/-3/'),
      key.replace('/3/', '/2147483648/'),
      key.replace('00000000000000000100-', '0000000000000000100-'),
      key.replace('-00000000000000000250-', '-00000000000000000100-'),
      key.replace('-00000000000000000250-', '-00000000000000000050-'),
      key.replace('-00000000000000000250-', '-99999999999999999999-'),
      key.replace(TOPIC, 'not-a-uuid'),
      key.replace(UPLOAD, `${UPLOAD.slice(0, 21)}B`),
      key.replace('p/tier/', 'p/tiers/'),
      key.replace('p/tier/', 'p//tier/'),
      `/${tieredSegmentKey('', TOPIC, 3, 100, 250, UPLOAD)}`,
      key.replace('/3/', '/3/extra/'),
      walObjectKey('p', { writerId: 'broker-1', epoch: 2 }, 5),
    ];
    for (const other of rejected) expect(parseTieredSegmentKey(other)).toBeNull();
  });
});
