// Topic ids for tests that build WAL frames by hand: one fixed id per topic name, so a test
// reads as before, and `incarnation` gives the same name another id (a topic created again).
import { SeededRandom } from '../../src/util/random.ts';
import { randomUuid, type Uuid } from '../../src/util/uuid.ts';

export function idOf(topic: string, incarnation = 0): Uuid {
  let seed = incarnation * 0x9e3779b9;
  for (const char of topic) seed = (Math.imul(seed, 31) + char.charCodeAt(0)) >>> 0;
  return randomUuid(new SeededRandom(seed));
}
