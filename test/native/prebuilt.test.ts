import { describe, expect, test } from 'bun:test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { allTargets, type BuildTarget, buildTarget, compilerString, nativeTarget, PREBUILT_DIR, readManifest, recordedCommand, REPO_ROOT, sha256Hex } from '../../native/build.ts';
import { tempDir } from '../support/temp-dir.ts';

// The committed binaries in native/prebuilt must be what their committed sources build:
// editing native/*.c without running `bun native/build.ts` fails here.

const manifest = readManifest();

function sha256OfFile(path: string): string {
  return sha256Hex(readFileSync(path));
}

function checks(target: BuildTarget): void {
  const record = manifest.outputs[target.output];
  const outputFile = join(PREBUILT_DIR, target.output);

  test('is listed in manifest.json and committed', () => {
    expect(record).toBeDefined();
    expect(existsSync(outputFile)).toBe(true);
  });

  test('its sources still have the sha256 it was built from (else: bun native/build.ts)', () => {
    expect(Object.keys(record!.sources)).toEqual([...target.sources]);
    for (const source of target.sources) {
      expect([source, sha256OfFile(join(REPO_ROOT, source))]).toEqual([source, record!.sources[source]!]);
    }
  });

  test('the committed file has the sha256 recorded for it', () => {
    expect(sha256OfFile(outputFile)).toBe(record!.sha256);
    expect(readFileSync(outputFile).length).toBe(record!.bytes);
  });

  test('build.ts still uses the recorded command (flags unchanged since the build)', () => {
    expect(recordedCommand(target)).toEqual([...record!.command]);
  });

  // Byte-identical output needs the very compiler that made the committed file.
  const compiler = compilerString(target);
  const sameCompiler = record !== undefined && compiler === record.compiler;
  const reason = compiler === null ? `${target.tools.join(' and ')} not installed` : `installed "${compiler}" differs from recorded "${record?.compiler}"`;
  test.skipIf(!sameCompiler)(`rebuilds byte-identically with the same compiler${sameCompiler ? '' : ` (skipped: ${reason})`}`, () => {
    const rebuilt = buildTarget(target, tempDir('ferry-prebuilt-'));
    expect(rebuilt.sha256).toBe(record!.sha256);
    expect(rebuilt.sources).toEqual(record!.sources);
  });
}

// The compiler the committed native build was made with (the manifest's command), not $CC.
const nativeCompiler = manifest.outputs[nativeTarget().output]?.command[0];

for (const target of allTargets(nativeCompiler)) {
  // Only linux-x64 has a committed native build so far; other platforms fall back to tcc/wasm.
  const present = manifest.outputs[target.output] !== undefined;
  if (target.label === 'native' && !present) {
    test.skip(`native: no committed build for ${process.platform}-${process.arch} (skipped)`, () => {});
    continue;
  }
  describe(`prebuilt ${target.output}`, () => checks(target));
}
