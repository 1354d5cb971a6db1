import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const REPOSITORY = resolve(import.meta.dir, '../..');

/** The first ```ts block of the README section that starts with `heading`. */
function firstTypeScriptBlock(markdown: string, heading: string): string {
  const section = markdown.slice(markdown.indexOf(`\n${heading}\n`));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (match === null) throw new Error(`no ts block under ${heading}`);
  return match[1]!;
}

test("the README's embedding example is examples/embedded.ts, which the package test runs twice", () => {
  const readme = readFileSync(resolve(REPOSITORY, 'README.md'), 'utf8');
  const example = readFileSync(resolve(REPOSITORY, 'examples/embedded.ts'), 'utf8');
  expect(firstTypeScriptBlock(readme, '## Embedding')).toBe(example);
});
