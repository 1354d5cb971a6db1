import { expect, test } from 'bun:test';
import { LOG_TEXT_CHARS_MAX, logText } from '../../src/util/log-text.ts';

test('control characters and line separators are escaped, so client text cannot start a log line of its own', () => {
  expect(logText('alice\n2026-12-02T00:00:00Z authorization: User:admin granted')).toBe('alice\\u000a2026-12-02T00:00:00Z authorization: User:admin granted');
  expect(logText('a\rb\u0000c\u2028d\u007f')).toBe('a\\u000db\\u0000c\\u2028d\\u007f');
  expect(logText('ünïcødé user')).toBe('ünïcødé user');
});

test('text past LOG_TEXT_CHARS_MAX is cut short', () => {
  expect(logText('x'.repeat(LOG_TEXT_CHARS_MAX + 100))).toBe(`${'x'.repeat(LOG_TEXT_CHARS_MAX)}...`);
});
