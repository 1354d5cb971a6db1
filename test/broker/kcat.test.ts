// kcat (librdkafka) unchanged against a Ferry broker: every compression codec it offers,
// acks=all, consuming by partition and in a group. .ci/run installs kcat from Debian.
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { useKcatBroker } from '../support/kcat-broker.ts';

setDefaultTimeout(60_000);

const { kcat, bootstrap } = useKcatBroker('ferry-kcat-');

describe('kcat against a Ferry broker', () => {
  test('lists the broker and topics (-L)', async () => {
    const { stdout, exitCode } = await kcat(['-L']);
    expect(exitCode).toBe(0);
    expect(stdout).toContain(`broker 1 at ${bootstrap()}`);
  });

  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    test(`produces with acks=all and ${codec} compression; consumes every message back in order`, async () => {
      const topic = `kcat-${codec}`;
      const lines = Array.from({ length: 50 }, (_, i) => `${codec} message ${i} ${'x'.repeat(i * 7)}`);
      const produced = await kcat(['-P', '-t', topic, '-p', '0', '-z', codec, '-X', 'acks=all'], `${lines.join('\n')}\n`);
      expect(produced.exitCode).toBe(0);
      const consumed = await kcat(['-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-f', '%o %s\\n']);
      expect(consumed.exitCode).toBe(0);
      expect(consumed.stdout.trim().split('\n')).toEqual(lines.map((line, i) => `${i} ${line}`));
    });
  }

  test('an idempotent producer (librdkafka enable.idempotence) is acknowledged; every message reads back once, in order', async () => {
    const topic = 'kcat-idempotent';
    const lines = Array.from({ length: 40 }, (_, i) => `idempotent ${i}`);
    const produced = await kcat(['-P', '-t', topic, '-p', '0', '-z', 'zstd', '-X', 'enable.idempotence=true', '-X', 'acks=all'], `${lines.join('\n')}\n`);
    expect(produced.stderr).not.toContain('ERROR');
    expect(produced.exitCode).toBe(0);
    const consumed = await kcat(['-C', '-t', topic, '-p', '0', '-o', 'beginning', '-e', '-f', '%o %s\\n']);
    expect(consumed.stdout.trim().split('\n')).toEqual(lines.map((line, i) => `${i} ${line}`));
  });

  test('a consumer group reads everything once and resumes from its committed offset', async () => {
    const topic = 'kcat-group';
    expect((await kcat(['-P', '-t', topic, '-X', 'acks=all'], 'a\nb\nc\n')).exitCode).toBe(0);
    const group = ['-G', 'kcat-readers', topic, '-e', '-X', 'auto.offset.reset=earliest', '-X', 'session.timeout.ms=6000', '-f', '%s\\n'];
    const first = await kcat(group);
    expect(first.stdout.trim().split('\n')).toEqual(['a', 'b', 'c']);
    expect((await kcat(['-P', '-t', topic, '-X', 'acks=all'], 'd\n')).exitCode).toBe(0);
    const second = await kcat(group);
    expect(second.stdout.trim().split('\n')).toEqual(['d']);
  });

  test('reads from an offset and by timestamp (ListOffsets)', async () => {
    const topic = 'kcat-offsets';
    expect((await kcat(['-P', '-t', topic, '-p', '0'], 'zero\none\ntwo\nthree\n')).exitCode).toBe(0);
    const fromTwo = await kcat(['-C', '-t', topic, '-p', '0', '-o', '2', '-e', '-f', '%s\\n']);
    expect(fromTwo.stdout.trim().split('\n')).toEqual(['two', 'three']);
    const lastOne = await kcat(['-C', '-t', topic, '-p', '0', '-o', '-1', '-e', '-f', '%s\\n']);
    expect(lastOne.stdout.trim().split('\n')).toEqual(['three']);
    const byTime = await kcat(['-C', '-t', topic, '-p', '0', '-o', `s@${Date.now() - 60_000}`, '-e', '-f', '%s\\n']);
    expect(byTime.stdout.trim().split('\n')).toEqual(['zero', 'one', 'two', 'three']);
  });
});
