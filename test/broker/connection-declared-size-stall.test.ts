// Budget reserved by declared size, granted first come first served (finding 17, adversarial
// review). A connection reserves a frame's whole declared size as soon as its 4-byte prefix
// arrives, and a reservation that does not fit queues every later one behind it. So three
// connections that each send only a size prefix of 100 MB (12 bytes in all, nothing after) take
// the broker-wide budget: two hold 200 MB, the third waits at the head of the queue for room, and
// every other client's request, however small and though 56 MB are free, waits behind it until
// connections.max.idle.ms (10 minutes) closes the first two, and the next such connection takes
// their place. Kafka's memory pool refuses what does not fit without blocking what does.
import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { Connection, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from '../../src/broker/connection.ts';
import { RequestMemory } from '../../src/broker/request-memory.ts';
import { ManualClock } from '../../src/util/clock.ts';

function socket(): Socket<unknown> {
  return { write: (bytes: Uint8Array) => bytes.length, end: () => {}, pause: () => {}, resume: () => {} } as unknown as Socket<unknown>;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function sizePrefix(size: number): Uint8Array {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setInt32(0, size);
  return bytes;
}

// Open: request memory is reserved by declared size, first come first served (Kafka's
// queued.max.request.bytes does the same), so size prefixes alone can hold the budget until the
// idle timeout. A known limitation, kept as a todo; `bun test --todo` runs it (and it fails today).
test.todo('three bare 100 MB size prefixes do not stop a small request of another client', async () => {
  const clock = new ManualClock();
  const idleMs = 600_000;
  const memory = new RequestMemory(QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  const never = () => new Promise<Uint8Array[] | null>(() => {});
  const attackers = Array.from({ length: 3 }, () => new Connection(socket(), never, () => {}, { memory, clock, idleMs }));
  for (const attacker of attackers) attacker.received(sizePrefix(REQUEST_BYTES_MAX));
  await settle();
  expect(memory.reservedBytes).toBe(2 * REQUEST_BYTES_MAX); // the third waits; 56 MB are free

  let served = 0;
  const polite = new Connection(
    socket(),
    async () => (served++, [Uint8Array.of(0)]),
    () => {},
    { memory, clock, idleMs },
  );
  polite.received(Uint8Array.of(0, 0, 0, 4, 0, 18, 0, 0)); // an ApiVersions-sized request
  await settle();
  clock.advance(idleMs / 10); // a minute: nothing of the attackers has timed out
  await settle();
  expect(served).toBe(1);
  for (const connection of [...attackers, polite]) connection.close();
});
