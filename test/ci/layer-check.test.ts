// .ci/layer-check.ts (issue 26): folder cycles, files over the limit and folders without a
// README.md are named; a tree that imports one way passes. On fixture trees written here, not on
// src/ (which has its cycles until issue 26's moves are done).
import { afterAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkLayers, checkReadmes, FILE_LINES_MAX } from '../../.ci/layer-check.ts';

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'ferry-layers-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test('a cycle between folders is named with the imports that close it; a top-level file is a unit of its own', () => {
  const root = tree({
    'a/one.ts': "import { two } from '../b/two.ts';\nexport const one = two;\n",
    'b/two.ts': "import { three } from '../errors.ts';\nexport const two = three;\n",
    'errors.ts': "import type { One } from './a/types.ts';\nexport const three = 3;\n",
    'a/types.ts': 'export type One = 1;\n',
    'c/four.ts': "import { one } from '../a/one.ts';\nexport const four = one;\n",
  });
  expect(checkLayers(root).cycles).toEqual([{ units: ['a/', 'b/', 'errors.ts'], imports: ['a/one.ts -> b/two.ts', 'b/two.ts -> errors.ts', 'errors.ts -> a/types.ts'] }]);
});

test('a tree that imports one way passes; the simulation and generated messages are not judged', () => {
  const root = tree({
    'a/one.ts': "import { two } from '../b/two.ts';\nexport const one = two;\n",
    'b/two.ts': 'export const two = 2;\n',
    'sim/run.ts': "import { one } from '../a/one.ts';\n".repeat(FILE_LINES_MAX + 1),
    'b/back.ts': "import { run } from '../sim/run.ts';\n", // an import of the simulation closes no cycle it is judged for
    'protocol/messages/fetch.ts': 'export const x = 1;\n'.repeat(FILE_LINES_MAX + 1),
  });
  expect(checkLayers(root)).toEqual({ cycles: [], longFiles: [] });
});

test(`a file over ${FILE_LINES_MAX} lines is named with its length`, () => {
  const root = tree({ 'a/long.ts': 'export const x = 1;\n'.repeat(FILE_LINES_MAX + 1), 'a/short.ts': 'export const y = 1;\n'.repeat(FILE_LINES_MAX) });
  expect(checkLayers(root).longFiles).toEqual([{ file: 'a/long.ts', lines: FILE_LINES_MAX + 1 }]);
});

test('a file still to split passes at its listed length and fails once it grows', () => {
  const root = tree({ 'a/long.ts': 'export const x = 1;\n'.repeat(FILE_LINES_MAX + 10) });
  expect(checkLayers(root, { 'a/long.ts': FILE_LINES_MAX + 10 }).longFiles).toEqual([]);
  expect(checkLayers(root, { 'a/long.ts': FILE_LINES_MAX + 9 }).longFiles).toEqual([{ file: 'a/long.ts', lines: FILE_LINES_MAX + 10 }]);
});

test('every folder directly under the root needs a README.md: those without one are named; deeper folders and top-level files are not judged', () => {
  const root = tree({
    'a/README.md': '# a\n',
    'a/one.ts': 'export const one = 1;\n',
    'a/inner/two.ts': 'export const two = 2;\n',
    'b/three.ts': 'export const three = 3;\n',
    'c/four.ts': 'export const four = 4;\n',
    'errors.ts': 'export const five = 5;\n',
  });
  expect(checkReadmes(root)).toEqual({ missing: ['b', 'c'], stale: [] });
});

test('a folder still to write its README may lack one; once it has one, or is gone, it must leave the list', () => {
  const root = tree({ 'engine/ferry.ts': 'export const x = 1;\n', 'cluster/README.md': '# cluster\n', 'cluster/node.ts': 'export const y = 1;\n' });
  expect(checkReadmes(root, ['engine'])).toEqual({ missing: [], stale: [] });
  expect(checkReadmes(root, ['broker', 'cluster', 'engine'])).toEqual({ missing: [], stale: ['broker', 'cluster'] });
});
