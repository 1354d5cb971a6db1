// Every `docs/<name>.md` the code and the docs cite exists, and every section of docs/design.md
// they cite (`docs/design.md contract N`, `docs/design.md, "Prices"`) is a heading there: a
// citation that names a page or a section must lead somewhere (issue 26).
import { describe, expect, test } from 'bun:test';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const REPO = join(import.meta.dir, '..', '..');
/** Where `docs/<name>.md` paths are checked: the code, the docs, the README. */
const CITING_PATHS = ['src', 'docs', 'README.md'];
/** Where design.md's sections are checked: everything that cites it (tests and benches too). */
const DESIGN_CITING_PATHS = [...CITING_PATHS, 'test', 'bench', 'examples', '.ci'];
const TEXT_EXTENSIONS = ['.ts', '.js', '.cjs', '.md', '.json'];
const THIS_FILE = relative(REPO, import.meta.path);

/** A `docs/<name>.md` path not inside another path (so not `test/docs/...` or `./docs/api`). */
const DOCS_PATH = /(?<![\w./-])docs\/([\w-]+)\.md/g;
/** `docs/design.md` then a contract number list or a quoted section name, as the code cites them (a possessive `'s` is no quote). */
const DESIGN_CITATION = /docs\/design\.md(?:'s)?,?\s*\(?\s*(?:contracts?\s+(\d+(?:\s*(?:,|and)\s*\d+)*)|(?!'s\b)["'“]([^"'”]+)["'”])/g;

function textFiles(path: string): string[] {
  const full = join(REPO, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return TEXT_EXTENSIONS.some((extension) => path.endsWith(extension)) ? [path] : [];
  return readdirSync(full).flatMap((name) => (name === 'node_modules' || name === 'fixtures' ? [] : textFiles(join(path, name))));
}

/** The text with comment continuations joined, so a citation wrapped over two comment lines reads as one. */
function joinedLines(text: string): string {
  return text.replace(/[ \t]*\r?\n[ \t]*(?:\/\/+|\*(?!\/))?[ \t]*/g, ' ');
}

function citations(paths: readonly string[], pattern: RegExp): { file: string; match: RegExpMatchArray }[] {
  return paths
    .flatMap(textFiles)
    .filter((file) => file !== THIS_FILE)
    .flatMap((file) => [...joinedLines(readFileSync(join(REPO, file), 'utf8')).matchAll(pattern)].map((match) => ({ file, match })));
}

const designHeadings = readFileSync(join(REPO, 'docs', 'design.md'), 'utf8')
  .split('\n')
  .filter((line) => /^#{1,6} /.test(line))
  .map((line) => line.replace(/^#+ /, '').trim());

describe('cited docs', () => {
  test('every docs/<name>.md cited in src/, docs/ and README.md exists', () => {
    const found = citations(CITING_PATHS, DOCS_PATH);
    expect(found.length).toBeGreaterThan(0);
    const missing = found.filter(({ match }) => !existsSync(join(REPO, 'docs', `${match[1]}.md`))).map(({ file, match }) => `${file}: ${match[0]}`);
    expect(missing).toEqual([]);
  });

  test('every contract and section of docs/design.md cited is a heading there', () => {
    const found = citations(DESIGN_CITING_PATHS, DESIGN_CITATION);
    expect(found.length).toBeGreaterThan(0);
    const unresolved = found.flatMap(({ file, match }) => {
      const [, numbers, section] = match;
      const wanted = numbers === undefined ? [section!] : numbers.split(/\s*(?:,|and)\s*/).map((number) => `Contract ${number}`);
      const resolves = (heading: string) => (numbers === undefined ? designHeadings.includes(heading) : designHeadings.some((line) => line.startsWith(`${heading}:`)));
      return wanted.filter((heading) => !resolves(heading)).map((heading) => `${file}: ${match[0]} (no heading "${heading}")`);
    });
    expect(unresolved).toEqual([]);
  });

  test('nothing cites DESIGN.md, a file outside the repository, any more', () => {
    const stale = citations(DESIGN_CITING_PATHS, /DESIGN\.md/g).map(({ file }) => file);
    expect(stale).toEqual([]);
  });
});
