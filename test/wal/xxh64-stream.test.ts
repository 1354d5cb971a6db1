import { expect, test } from 'bun:test';
import { concatBytes } from '../../src/util/bytes.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { JoiningXxh64Stream, loadXxh64Stream, xxh64, type Xxh64Stream, xxh64Stream } from '../../src/wal/bytes.ts';

/** Random pieces: some views lying end to end in one buffer, some separate buffers, some empty. */
function randomPieces(random: SeededRandom): Uint8Array[] {
  const buffer = Uint8Array.from({ length: random.nextInt(50_000) }, () => random.nextInt(256));
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < buffer.length; ) {
    const length = Math.min(buffer.length - at, random.nextInt(3) === 0 ? 0 : 1 + random.nextInt(9000));
    pieces.push(random.nextInt(4) === 0 ? Uint8Array.from(buffer.subarray(at, at + length)) : buffer.subarray(at, at + length));
    at += length;
  }
  return pieces;
}

function checkAgainstOneShot(create: () => Xxh64Stream): void {
  const random = new SeededRandom(64);
  for (let i = 0; i < 200; i++) {
    const pieces = randomPieces(random);
    const stream = create();
    for (const piece of pieces) stream.update(piece);
    expect(stream.digest()).toBe(xxh64(concatBytes(pieces)));
  }
}

test('the joining stream digests the pieces as one buffer', () => {
  checkAgainstOneShot(() => new JoiningXxh64Stream());
  expect(new JoiningXxh64Stream().digest()).toBe(xxh64(new Uint8Array(0)));
});

test('once loaded, the streaming XXH64 equals the one-shot hash', async () => {
  await loadXxh64Stream();
  await loadXxh64Stream(); // idempotent
  expect(xxh64Stream()).not.toBeInstanceOf(JoiningXxh64Stream);
  checkAgainstOneShot(xxh64Stream);
});
