// `ferry inspect PATH` on real data the engine wrote (a data directory, a partition directory, a
// segment, a WAL object in the file store), and on damaged copies: a flipped byte is reported BAD
// with exit code 1. Issue 14: `ferry inspect <data dir>` printed nothing and exited 0.
import { beforeAll, expect, test } from 'bun:test';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ferry } from '../../src/ferry/index.ts';
import { FileStore } from '../../src/store/file.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
const PARTITIONS = 2;
const BATCHES_PER_PARTITION = 3;
const RECORDS_PER_BATCH = 10;

/** Built once (the engine's open and close dominate); each test copies what it damages. */
let data = '';

beforeAll(async () => {
  data = mkdtempSync(join(tmpdir(), 'ferry-inspect-'));
  const store = await FileStore.open(join(data, 'objects'));
  const ferry = await Ferry.open({ directory: data, wal: { store, writerId: 'node-1' } });
  ferry.createTopic('orders', { partitions: PARTITIONS });
  for (let batch = 0; batch < BATCHES_PER_PARTITION; batch++) {
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const records = Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ key: `k${i}`, value: `order ${batch}-${i}` }));
      await ferry.produce('orders', records, { partition, acks: 'all' });
    }
  }
  await ferry.close();
  await store.close();
});

async function inspect(...args: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const child = Bun.spawn([process.execPath, CLI, 'inspect', ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

function walObjects(): string[] {
  const root = join(data, 'objects', 'objects');
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.includes('wal.d/') && file.endsWith('.o'))
    .map((file) => join(root, file));
}

const lastOffset = BATCHES_PER_PARTITION * RECORDS_PER_BATCH - 1;

test('a data directory: one summary line per partition, and the WAL objects of its file store', async () => {
  const { stdout, stderr, exitCode } = await inspect(data);
  expect({ stderr, exitCode }).toEqual({ stderr: '', exitCode: 0 });
  expect(stdout).toContain(`data directory ${data}: 1 topics, ${PARTITIONS} partitions`);
  for (let partition = 0; partition < PARTITIONS; partition++) {
    expect(stdout).toMatch(new RegExp(`orders-${partition}: segments=1 offsets=0\\.\\.${lastOffset} batches=${BATCHES_PER_PARTITION} bytes=\\d+ leaderEpoch=\\d+ .* crc=ok`));
  }
  expect(stdout).toContain(`WAL objects in the file store: ${walObjects().length} under`);
  expect(walObjects().length).toBeGreaterThan(0);
});

test('a partition directory: its segments; --batches lists every batch', async () => {
  const partition = join(data, 'orders-1');
  const plain = await inspect(partition);
  expect(plain.exitCode).toBe(0);
  expect(plain.stdout).toContain(`segment 00000000000000000000.log: offsets 0..${lastOffset} batches=${BATCHES_PER_PARTITION}`);
  const detailed = await inspect(partition, '--batches');
  expect(detailed.stdout.split('\n').filter((line) => line.includes(' crc=ok') && line.trimStart().startsWith('offsets '))).toHaveLength(BATCHES_PER_PARTITION);
});

test('a segment: each batch with offsets, count, timestamps and its CRC; --json says the same', async () => {
  const segment = join(data, 'orders-0', '00000000000000000000.log');
  const { stdout, exitCode } = await inspect(segment);
  expect(exitCode).toBe(0);
  expect(stdout).toContain(`offsets 0..${RECORDS_PER_BATCH - 1} records=${RECORDS_PER_BATCH} bytes=`);
  expect(stdout).toMatch(/timestamps=\d{4}-\d\d-\d\dT[^ ]+\.\.\d{4}-/);
  expect(stdout).toContain(`${BATCHES_PER_PARTITION} batches, all valid`);
  const json = JSON.parse((await inspect(segment, '--json')).stdout) as { kind: string; batches: { baseOffset: number; records: number; crc: string }[]; problem: null };
  expect(json.kind).toBe('segment');
  expect(json.batches.map((batch) => batch.baseOffset)).toEqual(Array.from({ length: BATCHES_PER_PARTITION }, (_, i) => i * RECORDS_PER_BATCH));
  expect(json.problem).toBeNull();
});

test('a segment with a flipped byte: the batch is INVALID, exit code 1', async () => {
  const copy = join(tempDir(), '00000000000000000000.log');
  const bytes = readFileSync(join(data, 'orders-0', '00000000000000000000.log'));
  bytes[bytes.length - 3]! ^= 0xff; // inside the last batch's records: covered by its CRC
  writeFileSync(copy, bytes);
  const { stdout, exitCode } = await inspect(copy);
  expect(exitCode).toBe(1);
  expect(stdout).toContain('INVALID at byte');
  expect(stdout.split('\n').filter((line) => line.includes('crc=ok'))).toHaveLength(BATCHES_PER_PARTITION - 1);
});

test('a WAL object: header, frames and every checksum ok', async () => {
  const object = walObjects()[0]!;
  const { stdout, exitCode } = await inspect(object);
  expect(exitCode).toBe(0);
  expect(stdout).toMatch(/header: data writer=node-1 epoch=\d+ sequence=\d+ created=\S+ checksum ok/);
  expect(stdout).toMatch(/footer: \d+ frames, checksum ok/);
  expect(stdout).toMatch(/frame orders-\d \(topic id \S+\) offsets \d+\.\.\d+ epoch=\d+ bytes=\d+ position=\d+ batches=\d+ checksum ok crc ok/);
  expect(stdout).toContain('all checksums ok');
  const json = JSON.parse((await inspect(object, '--json')).stdout) as { kind: string; ok: boolean; frames: { checksum: string }[] };
  expect(json).toMatchObject({ kind: 'wal-object', ok: true });
  expect(json.frames.length).toBeGreaterThan(0);
});

test("a WAL object with a flipped data byte: that frame's checksum is BAD, exit code 1", async () => {
  const object = walObjects()[0]!;
  const json = JSON.parse((await inspect(object, '--json')).stdout) as { offset: number; frames: { position: number; bytes: number }[] };
  const frame = json.frames[0]!;
  const copy = join(tempDir(), 'damaged.o');
  copyFileSync(object, copy);
  const bytes = readFileSync(copy);
  bytes[json.offset + frame.position + frame.bytes]! ^= 0x01; // the frame's data ends at position + header + bytes; this byte is inside it
  writeFileSync(copy, bytes);
  const { stdout, exitCode } = await inspect(copy);
  expect(exitCode).toBe(1);
  expect(stdout).toMatch(/ checksum BAD: corrupt WAL object at byte \d+: dataChecksum: expected 0x[0-9a-f]+, computed 0x[0-9a-f]+\n/);
  expect(stdout).toContain('BAD: the object is damaged');
});

test('a path that is none of these says so in one line, exit code 2', async () => {
  const other = join(tempDir(), 'notes.txt');
  writeFileSync(other, 'hello\n');
  for (const path of [other, tempDir(), join(tempDir(), 'missing')]) {
    const { stdout, stderr, exitCode } = await inspect(path);
    expect({ stdout, exitCode }).toEqual({ stdout: '', exitCode: 2 });
    expect(stderr).toMatch(/^ferry inspect: [^\n]+\n$/);
  }
});
