#!/usr/bin/env bun
/**
 * Builds the committed CRC32C binaries and their manifest (see native/README.md):
 *   native/prebuilt/<platform>-<arch>/libferry_crc32c.<so|dylib>   from native/crc32c.c (cc)
 *   native/prebuilt/crc32c.wasm                                     from native/crc32c.wasm.c (clang)
 *   native/prebuilt/manifest.json   source and output sha256, compiler version, exact command
 * A target whose toolchain is missing is skipped and keeps its manifest entry.
 * test/native/prebuilt.test.ts checks the manifest and rebuilds byte-identically when it can.
 */
import { suffix } from 'bun:ffi';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

export const REPO_ROOT = join(import.meta.dir, '..');
export const PREBUILT_DIR = join(import.meta.dir, 'prebuilt');
export const MANIFEST_FILE = 'manifest.json';

/** Stands for the repository's absolute path in recorded commands, which run from there. */
export const REPO_ROOT_PLACEHOLDER = '$REPO_ROOT';

export interface BuildRecord {
  /** sha256 (hex) of each source file, keyed by its path from the repository root. */
  readonly sources: Record<string, string>;
  readonly sha256: string;
  readonly bytes: number;
  /** First line of each tool's --version, joined by '; '. */
  readonly compiler: string;
  /** argv, run from the repository root; REPO_ROOT_PLACEHOLDER stands for its path. */
  readonly command: readonly string[];
}

export interface Manifest {
  readonly note: string;
  /** Keyed by the output's path from native/prebuilt. */
  readonly outputs: Record<string, BuildRecord>;
}

export interface BuildTarget {
  readonly label: string;
  /** Path from native/prebuilt (or from the chosen output directory). */
  readonly output: string;
  readonly sources: readonly string[];
  /** Tools that must be on PATH; each is asked for --version. */
  readonly tools: readonly string[];
  /** argv writing to `outputFile` (absolute); `root` is the repository's absolute path. */
  command(outputFile: string, root: string): string[];
}

const MANIFEST_NOTE = 'Written by native/build.ts. Commands run from the repository root ($REPO_ROOT). ' + 'test/native/prebuilt.test.ts checks every sha256 here.';

function nativeLinkFlags(): string[] {
  if (process.platform === 'darwin') return ['-dynamiclib', '-Wl,-no_uuid'];
  return ['-shared', '-Wl,--build-id=none']; // no build id: it would differ per build path
}

/** The native library for this platform; plain -O3, as the C file picks CPU features itself. */
export function nativeTarget(compiler = process.env.CC ?? 'cc'): BuildTarget {
  return {
    label: 'native',
    output: `${process.platform}-${process.arch}/libferry_crc32c.${suffix}`,
    sources: ['native/crc32c.c'],
    tools: [compiler],
    command: (outputFile, root) => [
      compiler,
      '-O3',
      '-fPIC',
      '-fvisibility=hidden',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-ffile-prefix-map=${root}=.`,
      '-s', // no symbol table: the dynamic symbols are all bun:ffi needs; keeps it small
      ...nativeLinkFlags(),
      '-o',
      outputFile,
      'native/crc32c.c',
    ],
  };
}

export const WASM_EXPORTS = ['ferry_crc32c', 'ferry_crc32c_init', 'ferry_crc32c_input', 'ferry_crc32c_input_capacity'];

/** The WASM module: no libc, no start function, names and debug info stripped (~1.5 KiB). */
export function wasmTarget(): BuildTarget {
  return {
    label: 'wasm',
    output: 'crc32c.wasm',
    sources: ['native/crc32c.wasm.c'],
    tools: ['clang', 'wasm-ld'],
    command: (outputFile, root) => [
      'clang',
      '--target=wasm32',
      '-O3',
      '-ffreestanding',
      '-nostdlib',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-ffile-prefix-map=${root}=.`,
      '-Wl,--no-entry',
      '-Wl,--strip-all',
      ...WASM_EXPORTS.map((name) => `-Wl,--export=${name}`),
      '-o',
      outputFile,
      'native/crc32c.wasm.c',
    ],
  };
}

export function allTargets(nativeCompiler = process.env.CC ?? 'cc'): BuildTarget[] {
  return [nativeTarget(nativeCompiler), wasmTarget()];
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** First line of `tool --version`, or null when the tool cannot run. */
export function toolVersion(tool: string): string | null {
  if (Bun.which(tool) === null) return null;
  const result = Bun.spawnSync([tool, '--version'], { stdout: 'pipe', stderr: 'pipe' });
  if (result.exitCode !== 0) return null;
  return result.stdout.toString().split('\n')[0]!.trim();
}

/** The compiler string for a target, or null when one of its tools is missing. */
export function compilerString(target: BuildTarget): string | null {
  const versions = target.tools.map(toolVersion);
  if (versions.some((version) => version === null)) return null;
  return versions.join('; ');
}

/** The command as recorded: the root's path replaced, the output named from the root. */
export function recordedCommand(target: BuildTarget): string[] {
  const output = join('native/prebuilt', target.output);
  return target.command(output, REPO_ROOT).map((argument) => argument.split(REPO_ROOT).join(REPO_ROOT_PLACEHOLDER));
}

function sourceHashes(target: BuildTarget): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const source of target.sources) hashes[source] = sha256Hex(readFileSync(join(REPO_ROOT, source)));
  return hashes;
}

/** Compiles one target into outDir; throws with the compiler's output when it fails. */
export function buildTarget(target: BuildTarget, outDir: string): BuildRecord {
  const compiler = compilerString(target);
  if (compiler === null) throw new Error(`${target.label}: needs ${target.tools.join(' and ')} on PATH`);
  const outputFile = join(outDir, target.output);
  mkdirSync(dirname(outputFile), { recursive: true });
  const result = Bun.spawnSync(target.command(outputFile, REPO_ROOT), {
    cwd: REPO_ROOT,
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if (result.exitCode !== 0) {
    throw new Error(`${target.label}: build failed\n${result.stdout}${result.stderr}`);
  }
  const output = readFileSync(outputFile);
  return {
    sources: sourceHashes(target),
    sha256: sha256Hex(output),
    bytes: output.length,
    compiler,
    command: recordedCommand(target),
  };
}

export function readManifest(dir = PREBUILT_DIR): Manifest {
  const file = join(dir, MANIFEST_FILE);
  if (!existsSync(file)) return { note: MANIFEST_NOTE, outputs: {} };
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

/** Sorted keys and a trailing newline, so unchanged builds leave the file unchanged. */
function writeManifest(dir: string, outputs: Record<string, BuildRecord>): void {
  const sorted: Record<string, BuildRecord> = {};
  for (const key of Object.keys(outputs).sort()) sorted[key] = outputs[key]!;
  const manifest: Manifest = { note: MANIFEST_NOTE, outputs: sorted };
  writeFileSync(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** A target skipped for lack of tools is stale when its sources changed since its build. */
function staleSkipped(target: BuildTarget, previous: BuildRecord | undefined): boolean {
  if (previous === undefined) return true;
  const now = sourceHashes(target);
  return Object.entries(now).some(([source, hash]) => previous.sources[source] !== hash);
}

function buildAll(outDir: string, targets: BuildTarget[]): number {
  const outputs = { ...readManifest(outDir).outputs };
  let failures = 0;
  for (const target of targets) {
    if (compilerString(target) === null) {
      const stale = staleSkipped(target, outputs[target.output]);
      console.warn(`skip ${target.label}: ${target.tools.join(' and ')} not found${stale ? ` and ${target.output} is missing or older than its source` : ' (prebuilt is current)'}`);
      if (stale) failures++;
      continue;
    }
    const record = buildTarget(target, outDir);
    outputs[target.output] = record;
    console.log(`built ${target.output} (${record.bytes} bytes, ${record.compiler})`);
  }
  writeManifest(outDir, outputs);
  return failures;
}

const HELP = `Usage: bun native/build.ts [--out-dir DIR] [--only native|wasm]

Compiles native/crc32c.c with cc (or $CC) into
  native/prebuilt/${process.platform}-${process.arch}/libferry_crc32c.${suffix}
and native/crc32c.wasm.c with clang + wasm-ld into native/prebuilt/crc32c.wasm, then writes
native/prebuilt/manifest.json (sha256 of sources and outputs, compiler version, command).
A target whose toolchain is missing is skipped; the exit status is 1 if its prebuilt output
is then older than its source. Commit the outputs and the manifest together.

  --out-dir DIR   write outputs and manifest under DIR instead of native/prebuilt
  --only NAME     build one target: native or wasm
  --help          this text`;

function parseArguments(argv: string[]): { outDir: string; only: string | null } | null {
  let outDir = PREBUILT_DIR;
  let only: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i];
    if (argument === '--help' || argument === '-h') return null;
    if (argument === '--out-dir' && argv[i + 1] !== undefined) outDir = argv[++i]!;
    else if (argument === '--only' && (argv[i + 1] === 'native' || argv[i + 1] === 'wasm')) only = argv[++i]!;
    else throw new Error(`unknown or incomplete argument: ${argument}\n\n${HELP}`);
  }
  return { outDir, only };
}

if (import.meta.main) {
  const options = parseArguments(process.argv.slice(2));
  if (options === null) {
    console.log(HELP);
  } else {
    const targets = allTargets().filter((target) => options.only === null || target.label === options.only);
    mkdirSync(options.outDir, { recursive: true });
    const failures = buildAll(options.outDir, targets);
    console.log(`manifest: ${relative(process.cwd(), join(options.outDir, MANIFEST_FILE))}`);
    if (failures > 0) process.exit(1);
  }
}
