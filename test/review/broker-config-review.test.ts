// Review of issue 12 (promise 6): `ferry broker --config server.properties`: nothing silently
// ignored, a bad value stops the start with one line naming the key.
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

// FINDING 2: broker-level defaults whose topic-level forms Ferry refuses as `fixed` ("accepting it would
// silently not take effect") are accepted at broker level as keys Ferry "has no use for": a broker
// told to compress, to limit future timestamps tighter, or to refuse topic deletion does none of it.
for (const [line, key] of [
  ['compression.type=zstd', 'compression.type'],
  ['log.message.timestamp.after.max.ms=1000', 'log.message.timestamp.after.max.ms'],
  ['log.flush.interval.messages=1', 'log.flush.interval.messages'],
  ['log.roll.jitter.ms=60000', 'log.roll.jitter.ms'],
  ['delete.topic.enable=false', 'delete.topic.enable'],
] as const) {
  test(`FINDING 2: ${line} is not ignored with a "no use for" warning`, () => expectRefusedOrTaken(line, key));
}

// FINDING 3: Ferry supports message.timestamp.type=LogAppendTime per topic since issue 12, yet the
// broker-level default refuses it with "LogAppendTime is not supported" (config-keys.ts onlyValue).
test('FINDING 3: log.message.timestamp.type=LogAppendTime, which topics support, starts a broker', () => {
  expect(() => resolve('log.message.timestamp.type=LogAppendTime\n')).not.toThrow();
});

// FINDING 4: the value of a Kafka key Ferry ignores is never checked: Kafka refuses to start on these.
for (const line of ['num.io.threads=abc', 'socket.request.max.bytes=-5', 'unclean.leader.election.enable=maybe']) {
  test(`FINDING 4: a bad value of an ignored Kafka key stops the start (${line})`, () => {
    expect(() => resolve(`${line}\n`)).toThrow(CliError);
  });
}
