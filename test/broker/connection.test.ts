import { expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { Connection } from '../../src/broker/connection.ts';

/** A socket that takes every write at once and records it. */
function fakeSocket(written: Uint8Array[]): Socket<unknown> {
  return { write: (bytes: Uint8Array) => (written.push(Uint8Array.from(bytes)), bytes.length), end: () => {} } as unknown as Socket<unknown>;
}

function frame(apiKey: number, tag: number): Uint8Array {
  const bytes = new Uint8Array(8);
  const view = new DataView(bytes.buffer);
  view.setInt32(0, 4);
  view.setInt16(4, apiKey);
  view.setInt16(6, tag);
  return bytes;
}

test('produce requests overlap; any other request waits for everything before it; responses keep request order', async () => {
  const written: Uint8Array[] = [];
  const events: string[] = [];
  const finish = new Map<number, () => void>();
  const connection = new Connection(fakeSocket(written), (request) => {
    const tag = new DataView(request.buffer, request.byteOffset).getInt16(2);
    events.push(`start ${tag}`);
    return new Promise((resolve) => finish.set(tag, () => {
      events.push(`end ${tag}`);
      resolve([Uint8Array.of(tag)]);
    }));
  }, () => {});
  connection.received(Buffer.concat([frame(0, 1), frame(0, 2), frame(1, 3), frame(0, 4)])); // produce, produce, fetch, produce
  await Bun.sleep(1);
  expect(events).toEqual(['start 1', 'start 2']); // two produces at once; the fetch waits
  finish.get(2)!(); // the second finishes first...
  await Bun.sleep(1);
  expect(written.length).toBe(0); // ...but its response waits for the first's
  finish.get(1)!();
  await Bun.sleep(1);
  expect(events.slice(-1)).toEqual(['start 3']); // the fetch starts once both produces are done
  finish.get(3)!();
  await Bun.sleep(1);
  finish.get(4)!();
  await Bun.sleep(1);
  expect(written.map((bytes) => bytes.at(-1))).toEqual([1, 2, 3, 4]);
});
