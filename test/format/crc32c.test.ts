import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { crc32c, crc32cImplementations, crc32cSelection, selectedCrc32c } from '../../src/format/crc32c/index.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tsCrc32c } from '../../src/format/crc32c/ts.ts';
import { WASM_CHUNK_BYTES } from '../../src/format/crc32c/wasm.ts';

// One conformance suite, run for every implementation that loads here and for each of its
// CPU-specific code paths (so a fast CPU still tests the slower paths it never picks).

type Update = (crc: number, data: Uint8Array) => number;

interface Variant {
  readonly label: string;
  readonly update: Update;
}

function variants(): Variant[] {
  const found: Variant[] = [];
  for (const implementation of crc32cImplementations()) {
    found.push({ label: implementation.name, update: implementation.update });
    const paths = (implementation as { paths?: ReadonlyMap<string, Update> }).paths;
    if (paths === undefined || paths.size < 2) continue;
    for (const [path, update] of paths) found.push({ label: `${implementation.name} path ${path}`, update });
  }
  return found;
}

// Seeded so a failure replays exactly.
const seeded = new SeededRandom(3720);
const random = (): number => seeded.next();
const randomInt = (below: number): number => Math.floor(random() * below);

function randomBytes(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = randomInt(256);
  return bytes;
}

function hex(text: string): Uint8Array {
  return Uint8Array.from(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
}

const ascending = Uint8Array.from({ length: 32 }, (_, i) => i);
const descending = Uint8Array.from({ length: 32 }, (_, i) => 31 - i);

/** RFC 3720 (iSCSI) appendix B.4, plus the usual check value and the empty input. */
const PUBLISHED: readonly (readonly [string, Uint8Array, number])[] = [
  ['empty', new Uint8Array(0), 0],
  ['"123456789"', new TextEncoder().encode('123456789'), 0xe3069283],
  ['32 bytes of zeros', new Uint8Array(32), 0x8a9136aa],
  ['32 bytes of 0xff', new Uint8Array(32).fill(0xff), 0x62a8ab43],
  ['32 ascending bytes 0..31', ascending, 0x46dd794e],
  ['32 descending bytes 31..0', descending, 0x113fdb5c],
];

/**
 * A gzip-compressed record batch (magic 2) as a Kafka broker returned it, from kafkajs's fixture
 * src/protocol/recordBatch/fixtures/v0_recordbatch.json. Fields, in order: baseOffset,
 * batchLength, partitionLeaderEpoch, magic, crc; attributes, lastOffsetDelta, baseTimestamp,
 * maxTimestamp, producerId, producerEpoch, baseSequence, record count; the gzip'd records.
 * The crc (bytes 17..20) was computed by Kafka over bytes 21..end.
 */
const KAFKA_BATCH = hex(`
  0000000000000000 00000071 00000000 02 e4c324a5
  0009 00000000 00000173edf5ffa7 00000173edf5ffc9 ffffffffffffffff 0000 00000000 00000001
  1f8b08000000000000130b636060e0ca4eadd43570284bcc294dd535d035323032d035b0d03534093134b73234b6
  32b0d033b3308a620000b5e3f1a72c000000`);
const KAFKA_CRC_OFFSET = 17;
const KAFKA_CRC_COVERED_FROM = 21;

/** Lengths around every block, threshold and chunk size in the implementations. */
const BOUNDARY_LENGTHS = [
  1,
  3,
  4,
  7,
  8,
  9,
  15,
  16,
  17,
  31,
  63,
  64,
  65,
  255,
  256,
  257,
  511,
  512,
  513,
  767,
  768,
  769,
  1023,
  1024,
  12_287,
  12_288,
  12_289,
  24_577,
  WASM_CHUNK_BYTES - 1,
  WASM_CHUNK_BYTES,
  WASM_CHUNK_BYTES + 1,
];

const RANDOM_CASES = 300;
const RANDOM_LENGTH_MAX = 70_000;
const POOL = randomBytes(3 * WASM_CHUNK_BYTES + 64);

interface Case {
  readonly offset: number;
  readonly length: number;
  readonly previous: number;
  readonly expected: number;
}

/** Odd offsets into POOL (unaligned views), a mix of short and long lengths, ts as reference. */
function randomCases(): Case[] {
  const cases: Case[] = [];
  for (let i = 0; i < RANDOM_CASES; i++) {
    const length = i % 2 === 0 ? randomInt(2_000) : randomInt(RANDOM_LENGTH_MAX + 1);
    const offset = 1 + 2 * randomInt(31);
    const previous = i % 3 === 0 ? 0 : randomInt(2 ** 32);
    const expected = tsCrc32c.update(previous, POOL.subarray(offset, offset + length));
    cases.push({ offset, length, previous, expected });
  }
  return cases;
}

const CASES = randomCases();

function conformance({ label, update }: Variant): void {
  describe(`crc32c conformance: ${label}`, () => {
    test('published vectors (RFC 3720, "123456789", empty)', () => {
      for (const [name, data, expected] of PUBLISHED) expect([name, update(0, data)]).toEqual([name, expected]);
    });

    test('the CRC a Kafka broker wrote into a record batch', () => {
      const stored = new DataView(KAFKA_BATCH.buffer).getUint32(KAFKA_CRC_OFFSET);
      expect(stored).toBe(0xe4c324a5);
      expect(update(0, KAFKA_BATCH.subarray(KAFKA_CRC_COVERED_FROM))).toBe(stored);
    });

    test('random lengths 0..70000 at odd offsets agree with ts', () => {
      for (const { offset, length, previous, expected } of CASES) {
        const actual = update(previous, POOL.subarray(offset, offset + length));
        if (actual !== expected) expect({ offset, length, previous, actual }).toEqual({ offset, length, previous, actual: expected });
      }
    });

    test('lengths around every block size, aligned and not', () => {
      for (const length of BOUNDARY_LENGTHS) {
        for (const offset of [0, 1, 7]) {
          const data = POOL.subarray(offset, offset + length);
          expect([length, offset, update(0, data)]).toEqual([length, offset, tsCrc32c.update(0, data)]);
        }
      }
    });

    test('continues a finished checksum: update(update(0, a), b) === update(0, a ++ b)', () => {
      const data = POOL.subarray(3, 3 + 40_000);
      const whole = tsCrc32c.update(0, data);
      for (const split of [0, 1, 5, 512, 4_097, 12_289, 39_999, 40_000]) {
        expect(update(update(0, data.subarray(0, split)), data.subarray(split))).toBe(whole);
      }
      // Previous values at and above 2^31 survive the trip through FFI and WASM unchanged.
      for (const previous of [0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff]) {
        expect(update(previous, new Uint8Array(0))).toBe(previous);
        expect(update(previous, data)).toBe(tsCrc32c.update(previous, data));
      }
    });

    test('buffers larger than the WASM chunk', () => {
      const data = POOL.subarray(1, 1 + 3 * WASM_CHUNK_BYTES + 17);
      expect(update(0, data)).toBe(tsCrc32c.update(0, data));
    });
  });
}

for (const variant of variants()) conformance(variant);

const LINUX_X64 = process.platform === 'linux' && process.arch === 'x64';

describe('crc32c selection', () => {
  // The committed native build is for linux-x64; elsewhere native may rightly be missing.
  test.skipIf(!LINUX_X64)(`native, tcc, wasm and ts all load${LINUX_X64 ? '' : ' (skipped: only checked on linux-x64, where a native build is committed)'}`, () => {
    expect(crc32cImplementations().map((implementation) => implementation.name)).toEqual(['native', 'tcc', 'wasm', 'ts']);
    for (const candidate of crc32cSelection().candidates) expect([candidate.name, candidate.problem]).toEqual([candidate.name, null]);
  });

  test('crc32c() uses the selected implementation, one of those that loaded', () => {
    const names = crc32cImplementations().map((implementation) => implementation.name);
    expect(names).toContain(selectedCrc32c().name);
    const data = POOL.subarray(5, 5 + 10_000);
    expect(crc32c(data)).toBe(tsCrc32c.update(0, data));
    expect(crc32c(data.subarray(100), crc32c(data.subarray(0, 100)))).toBe(tsCrc32c.update(0, data));
  });
});

const INDEX_MODULE = join(import.meta.dir, '../../src/format/crc32c/index.ts');

/** Runs a fresh bun with FERRY_CRC32C set and reports the implementation it selected. */
function selectedInSubprocess(value: string, bunFlags: string[] = []): { exitCode: number; output: string } {
  const script = `const m = await import(${JSON.stringify(INDEX_MODULE)}); console.log(m.selectedCrc32c().name);`;
  const result = Bun.spawnSync([process.execPath, ...bunFlags, '-e', script], {
    env: { ...process.env, FERRY_CRC32C: value },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return { exitCode: result.exitCode, output: `${result.stdout}${result.stderr}`.trim() };
}

describe('FERRY_CRC32C forces an implementation', () => {
  for (const name of ['native', 'tcc', 'wasm', 'ts']) {
    const loads = crc32cImplementations().some((implementation) => implementation.name === name);
    test.skipIf(!loads)(`FERRY_CRC32C=${name} selects it${loads ? '' : ' (skipped: it does not load here)'}`, () => {
      expect(selectedInSubprocess(name)).toEqual({ exitCode: 0, output: name });
    });
  }

  test('an unknown name fails with the list of names', () => {
    const { exitCode, output } = selectedInSubprocess('crc32');
    expect(exitCode).not.toBe(0);
    expect(output).toContain('FERRY_CRC32C=crc32: expected one of native, tcc, wasm, ts');
  });

  test('one that cannot load here fails clearly instead of falling back', () => {
    const { exitCode, output } = selectedInSubprocess('tcc', ['--no-ffi-cc']);
    expect(exitCode).not.toBe(0);
    expect(output).toContain('FERRY_CRC32C=tcc: cannot use it here');
  });
});
