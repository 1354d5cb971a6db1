// writeFileAtomicSync writes `<path>.tmp` and renames it. When the write fails (ENOSPC: a full
// disk, issue 9 finding 16) the temporary stayed behind. Producer snapshots are named by offset,
// so each roll on a full disk left one more: files that take the room the disk needs to recover.
import { afterEach, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../src/util/files.ts';
import { failNext, healDisk } from '../support/failing-fs.ts';
import { tempDir } from '../support/temp-dir.ts';

afterEach(healDisk);

test('a failed atomic write leaves neither the file nor its temporary', () => {
  const path = join(tempDir(), '00000000000000000042.snapshot');
  failNext('writeSync');
  expect(() => writeFileAtomicSync(path, new Uint8Array(100))).toThrow();
  expect({ file: existsSync(path), temporary: existsSync(`${path}.tmp`) }).toEqual({ file: false, temporary: false });
});
