import { expect, test } from 'bun:test';
import { SortedKeys } from '../../src/store/sorted-keys.ts';
import { SeededRandom } from '../../src/util/random.ts';

test('withPrefix lists the keys under a prefix as sorting every key would', () => {
  const random = new SeededRandom(7);
  const keys = new SortedKeys();
  const held = new Set<string>();
  const alphabet = ['a', 'b', '/', 'z', '0', '9', 'é'];
  for (let i = 0; i < 2_000; i++) {
    const key = Array.from({ length: 1 + random.nextInt(4) }, () => alphabet[random.nextInt(alphabet.length)]).join('');
    if (random.next() < 0.3) {
      keys.remove(key);
      held.delete(key);
    } else {
      keys.add(key);
      held.add(key);
    }
  }
  for (const prefix of ['', 'a', 'a/', 'z9', 'é', 'zzzzz']) {
    expect(keys.withPrefix(prefix)).toEqual([...held].filter((key) => key.startsWith(prefix)).sort());
  }
});

test('adding a key twice keeps one; removing a missing key is nothing', () => {
  const keys = new SortedKeys();
  keys.add('b');
  keys.add('a');
  keys.add('b');
  keys.remove('c');
  expect(keys.withPrefix('')).toEqual(['a', 'b']);
});
