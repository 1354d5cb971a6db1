/**
 * The C programs of bench/mock-cluster/ (all but fetch-drain against librdkafka), compiled with the system C compiler into a
 * temp directory at the start of a run (a second or so), and the kcat command-line client.
 * Nothing is built into the repository; Debian's librdkafka-dev provides the headers (including
 * rdkafka_mock.h) and the library, kcat is its own package.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTempDir } from './temp-dir.ts';

const SOURCE_DIRECTORY = resolve(import.meta.dir, '..', 'mock-cluster');
const PROGRAMS = ['mock-cluster', 'ack-latency', 'fetch-drain'] as const;
const CFLAGS = ['-O2', '-Wall', '-Wextra', '-pthread'];
const LIBRARIES = ['-lrdkafka'];

export interface RdkafkaPrograms {
  readonly mockCluster: string;
  readonly ackLatency: string;
  /** Needs no librdkafka: a Fetch loop that looks only at batch headers, and a loopback socket floor (fetch-drain.c). */
  readonly fetchDrain: string;
  readonly librdkafkaVersion: string;
}

export type BuildResult = { readonly ok: true; readonly programs: RdkafkaPrograms } | { readonly ok: false; readonly reason: string };

const INSTALL_HINT = 'install the C toolchain and librdkafka headers: apt-get install -y gcc librdkafka-dev';

/** Compiles mock-cluster.c, ack-latency.c and fetch-drain.c; on any failure says why and how to fix it. */
export function buildRdkafkaPrograms(): BuildResult {
  const compiler = process.env.CC ?? 'cc';
  if (Bun.which(compiler) === null) return { ok: false, reason: `no C compiler '${compiler}' on PATH (${INSTALL_HINT})` };
  const directory = makeTempDir('rdkafka-programs');
  const paths: Record<string, string> = {};
  for (const name of PROGRAMS) {
    const output = join(directory, name);
    const result = Bun.spawnSync([compiler, ...CFLAGS, '-o', output, join(SOURCE_DIRECTORY, `${name}.c`), ...LIBRARIES], { stdout: 'pipe', stderr: 'pipe' });
    if (result.exitCode !== 0) {
      const lines = result.stderr.toString().trim().split('\n');
      const message = lines.find((line) => /error/i.test(line)) ?? lines[0] ?? `exit ${result.exitCode}`;
      return { ok: false, reason: `building ${name}.c failed: ${message} (${INSTALL_HINT})` };
    }
    paths[name] = output;
  }
  return {
    ok: true,
    programs: { mockCluster: paths['mock-cluster']!, ackLatency: paths['ack-latency']!, fetchDrain: paths['fetch-drain']!, librdkafkaVersion: librdkafkaVersion(compiler, directory) },
  };
}

/** The linked librdkafka's version string, from a two-line program (for the run header). */
function librdkafkaVersion(compiler: string, directory: string): string {
  const source = join(directory, 'version.c');
  const output = join(directory, 'version');
  writeFileSync(source, '#include <stdio.h>\n#include <librdkafka/rdkafka.h>\nint main(void) { puts(rd_kafka_version_str()); return 0; }\n');
  const built = Bun.spawnSync([compiler, '-o', output, source, ...LIBRARIES], { stdout: 'pipe', stderr: 'pipe' });
  if (built.exitCode !== 0) return 'unknown';
  return Bun.spawnSync([output], { stdout: 'pipe' }).stdout.toString().trim() || 'unknown';
}

/** kcat's path, or null with the Debian package to install. */
export function findKcat(): string | null {
  return Bun.which('kcat') ?? Bun.which('kafkacat');
}
