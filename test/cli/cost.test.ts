// `ferry cost` as a user runs it: a bill line by line beside classic Kafka, --json that matches
// the model, and bad numbers refused in one line with exit code 2.
import { describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { compare, DEFAULT_DEPLOYMENT } from '../../src/cost/index.ts';

const CLI = join(import.meta.dir, '..', '..', 'src', 'cli.ts');

async function cost(args: readonly string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, CLI, 'cost', ...args], { stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}

describe('ferry cost', () => {
  test('prints both bills line by line, their totals and the ratio', async () => {
    const run = await cost(['--throughput-mb-s', '1', '--retention-days', '7', '--zones', '3']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('S3 Express: WAL PUTs');
    expect(run.stdout).toContain('S3 Standard: storage');
    expect(run.stdout).toContain('cross-zone: leader -> followers     $96.56');
    expect(run.stdout).toMatch(/classic Kafka \/ Ferry: \d+\.\d\dx/);
    expect(run.stdout).toContain('not modelled:');
  });

  test("--json is the model's comparison for the flags given", async () => {
    const run = await cost(['--throughput-mb-s', '250', '--retention-hours', '48', '--partitions', '128', '--brokers', '6', '--read-fanout', '2', '--json']);
    expect(run.exitCode).toBe(0);
    const printed = JSON.parse(run.stdout);
    const expected = compare({ ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: 250, retentionHours: 48, partitions: 128, brokers: 6, readFanout: 2 });
    expect(printed.ferry.totalUsdPerMonth).toBeCloseTo(expected.ferry.totalUsdPerMonth, 6);
    expect(printed.kafka.totalUsdPerMonth).toBeCloseTo(expected.kafka.totalUsdPerMonth, 6);
    expect(printed.deployment.retentionHours).toBe(48);
  });

  test('--no-upload-when-idle models the interval-only schedule: fewer WAL PUTs at 10 MB/s', async () => {
    const run = async (flags: string[]) => JSON.parse((await cost(['--throughput-mb-s', '10', '--json', ...flags])).stdout);
    const [idle, intervalOnly] = [await run([]), await run(['--no-upload-when-idle'])];
    const puts = (printed: { ferry: { lines: { item: string; usdPerMonth: number }[] } }) => printed.ferry.lines.find((line) => line.item === 'S3 Express: WAL PUTs')!.usdPerMonth;
    const expected = compare({ ...DEFAULT_DEPLOYMENT, throughputMbPerSecond: 10, ferry: { ...DEFAULT_DEPLOYMENT.ferry, uploadWhenIdle: false } });
    expect(intervalOnly.ferry.totalUsdPerMonth).toBeCloseTo(expected.ferry.totalUsdPerMonth, 6);
    expect(puts(intervalOnly)).toBeLessThan(puts(idle));
  });

  test.each([
    [['--throughput-mb-s', 'fast'], '--throughput-mb-s'],
    [['--throughput-mb-s', '-3'], '--throughput-mb-s'],
    [['--zones', '9'], '--zones'],
    [['--partitions', '2.5'], '--partitions'],
    [['--replication', '4', '--brokers', '3'], '--replication'],
    [['--retention-days', '1', '--retention-hours', '5'], '--retention-hours'],
    [['--bogus'], 'bogus'],
  ])('%p: one line naming %s, exit 2', async (args, named) => {
    const run = await cost(args);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith('ferry cost: ');
    expect(lines[0]).toContain(named);
  });
});
