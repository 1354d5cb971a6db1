// The Java properties format as java.util.Properties.load reads it (Kafka's server.properties).
import { describe, expect, test } from 'bun:test';
import { parseProperties, PropertiesError } from '../../src/cli/properties.ts';

/** key → value of a properties text. */
function read(text: string): Record<string, string> {
  return Object.fromEntries(parseProperties(text).map((entry) => [entry.key, entry.value]));
}

describe('properties', () => {
  test('key=value, key: value and key value, with whitespace around the separator', () => {
    expect(read('a=1\nb: 2\nc 3\nd   =   4\ne\t:\tfive\nf = = 6')).toEqual({ a: '1', b: '2', c: '3', d: '4', e: 'five', f: '= 6' });
  });

  test('leading whitespace is skipped, trailing whitespace of the value kept', () => {
    expect(read('   \t num.partitions=3  ')).toEqual({ 'num.partitions': '3  ' });
  });

  test('# and ! comment lines and blank lines are skipped; a # inside a value is part of it', () => {
    expect(read('# comment\n  ! also a comment\n\n   \nkey=value # not a comment\n')).toEqual({ key: 'value # not a comment' });
  });

  test('a key alone has an empty value', () => {
    expect(read('lonely\nempty=')).toEqual({ lonely: '', empty: '' });
  });

  test('a trailing backslash continues the line; the next line loses its leading whitespace', () => {
    expect(read('listeners=PLAINTEXT://:9092,\\\n    CONTROLLER://:9093\nnext=1')).toEqual({ listeners: 'PLAINTEXT://:9092,CONTROLLER://:9093', next: '1' });
  });

  test('an even count of trailing backslashes is escaped backslashes, not a continuation', () => {
    expect(read('path=C:\\\\\nnext=1')).toEqual({ path: 'C:\\', next: '1' });
  });

  test('a comment line never continues, but a continued line may look like a comment', () => {
    expect(read('# comment \\\nkey=1\nvalue=a\\\n#b')).toEqual({ key: '1', value: 'a#b' });
  });

  test('escapes: \\t \\n \\r \\f \\\\ \\uXXXX, and a backslash before any other character is that character', () => {
    expect(read('a=x\\ty\\nz\\r\\f\nb=\\\\\nc=\\u00e9\\u0041\nd=\\q\\=\\:')).toEqual({ a: 'x\ty\nz\r\f', b: '\\', c: 'éA', d: 'q=:' });
  });

  test('escaped separators and spaces belong to the key', () => {
    expect(read('my\\ key\\=x\\:y = v')).toEqual({ 'my key=x:y': 'v' });
  });

  test('\\r\\n and \\r end lines too', () => {
    expect(read('a=1\r\nb=2\rc=3')).toEqual({ a: '1', b: '2', c: '3' });
  });

  test('a key given twice keeps its last value', () => {
    expect(read('a=1\nb=2\na=3')).toEqual({ a: '3', b: '2' });
  });

  test('a backslash at the very end of the file continues into nothing', () => {
    expect(read('a=1\\')).toEqual({ a: '1' });
  });

  test('entries carry the line they start on', () => {
    expect(parseProperties('# c\n\na=1\\\n 2\nb=3').map((entry) => [entry.key, entry.line])).toEqual([
      ['a', 3],
      ['b', 5],
    ]);
  });

  test('a malformed \\u escape is an error naming the line', () => {
    expect(() => parseProperties('ok=1\nbad=\\u12g4')).toThrow(new PropertiesError(2, "malformed \\uXXXX escape '\\u12g4'"));
    expect(() => parseProperties('bad=\\u12')).toThrow(/line 1: malformed/);
  });
});
