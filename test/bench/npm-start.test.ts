import { expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { npmStartEnvironment } from '../../bench/lib/npm-start.ts';
import { tempDir } from '../support/temp-dir.ts';

function withStartScript(start: string): string {
  const root = tempDir();
  writeFileSync(join(root, 'package.json'), JSON.stringify({ scripts: { start } }));
  return root;
}

test("the benches' broker gets the environment npm start's script sets: its leading assignments only", () => {
  expect(npmStartEnvironment(withStartScript('A=1 B_2=x exec bun src/cli.ts broker C=3'))).toEqual({ A: '1', B_2: 'x' });
  expect(npmStartEnvironment(withStartScript('exec bun src/cli.ts broker'))).toEqual({});
});

test("this repository's npm start keeps freed pages (MIMALLOC_PURGE_DELAY=-1), and the benches see it", () => {
  expect(npmStartEnvironment(resolve(import.meta.dir, '..', '..'))).toEqual({ MIMALLOC_PURGE_DELAY: '-1' });
});
