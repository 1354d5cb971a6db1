// `ferry broker --config server.properties`: nothing that asks for a behaviour is silently ignored,
// and a bad value stops the start with one line naming the key (found by the review of issue 12).
import { expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from '../../src/cli/args.ts';
import { resolveBrokerConfig } from '../../src/cli/broker-config.ts';
import { tempDir } from '../support/temp-dir.ts';

function resolve(text: string) {
  const path = join(tempDir(), 'server.properties');
  writeFileSync(path, text);
  return resolveBrokerConfig({ flags: { config: path }, env: {} });
}

/** The start either takes the setting or stops with one line naming it; an "ignoring ... no use for" warning is neither. */
function expectRefusedOrTaken(line: string, key: string): void {
  let resolved: ReturnType<typeof resolve> | null = null;
  try {
    resolved = resolve(`${line}\n`);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).message).toContain(key);
    return;
  }
  expect(resolved!.warnings.join('\n')).not.toMatch(new RegExp(`no use for: .*${key.replace(/\./g, '\\.')}`));
}

// Broker-level defaults whose topic-level forms Ferry refuses as `fixed` (accepting them would
// silently not take effect): a broker told to compress, to limit future timestamps tighter, or to
// refuse topic deletion must not start as if it did.
for (const [line, key] of [
  ['compression.type=zstd', 'compression.type'],
  ['log.message.timestamp.after.max.ms=1000', 'log.message.timestamp.after.max.ms'],
  ['log.flush.interval.messages=1', 'log.flush.interval.messages'],
  ['log.roll.jitter.ms=60000', 'log.roll.jitter.ms'],
  ['delete.topic.enable=false', 'delete.topic.enable'],
] as const) {
  test(`${line} is not ignored with a "no use for" warning`, () => expectRefusedOrTaken(line, key));
}

test('log.message.timestamp.type=LogAppendTime, which topics support, starts a broker', () => {
  expect(() => resolve('log.message.timestamp.type=LogAppendTime\n')).not.toThrow();
});

// The broker form of a topic config is checked as the topic config is. (The values of other Kafka
// keys Ferry has no use for, num.io.threads say, are not checked: Ferry does not know their types.)
test("a bad value of a topic config's broker form stops the start (unclean.leader.election.enable=maybe)", () => {
  expect(() => resolve('unclean.leader.election.enable=maybe\n')).toThrow(CliError);
});
