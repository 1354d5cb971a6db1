// KafkaWriter.view keeps record batches as the views they are, and a view that continues the one
// before it in the same memory (the next batch of one segment read) extends that chunk: a fetch's
// batches leave as one chunk per read, never copied.
import { expect, test } from 'bun:test';
import { KafkaWriter } from '../../src/protocol/writer.ts';

const read = Buffer.from(Array.from({ length: 300 }, (_, index) => index % 251));

test('contiguous views of one buffer become one chunk over the same memory', () => {
  const writer = new KafkaWriter().int32(7).view(read.subarray(0, 100)).view(read.subarray(100, 250)).view(read.subarray(250, 300)).int16(1);
  const chunks = writer.chunks();
  expect(chunks.length).toBe(3);
  expect(chunks[1]!.buffer).toBe(read.buffer);
  expect(chunks[1]!.byteOffset).toBe(read.byteOffset);
  expect(Buffer.from(chunks[1]!)).toEqual(read);
  expect(writer.length).toBe(4 + 300 + 2);
});

test('views with a gap, out of order, of other memory, or with encoded bytes between them stay apart', () => {
  const other = Buffer.from(read);
  const cases: [string, (writer: KafkaWriter) => KafkaWriter, number][] = [
    ['a gap', (w) => w.view(read.subarray(0, 10)).view(read.subarray(11, 20)), 2],
    ['backwards', (w) => w.view(read.subarray(10, 20)).view(read.subarray(0, 10)), 2],
    ['another buffer', (w) => w.view(read.subarray(0, 10)).view(other.subarray(10, 20)), 2],
    ['a field between', (w) => w.view(read.subarray(0, 10)).int8(0).view(read.subarray(10, 20)), 3],
  ];
  for (const [, write, count] of cases) {
    const writer = write(new KafkaWriter());
    expect(writer.chunks().length).toBe(count);
  }
  const bytes = Buffer.concat(new KafkaWriter().view(read.subarray(0, 10)).int8(-1).view(read.subarray(10, 20)).chunks());
  expect(bytes).toEqual(Buffer.concat([read.subarray(0, 10), Buffer.of(0xff), read.subarray(10, 20)]));
});
