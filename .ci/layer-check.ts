// The layer check (issue 26): the folders of src/ import each other one way only, no file of
// src/ grows past FILE_LINES_MAX, and every folder directly under src/ has a README.md (what it is
// for, its face, what it may import, the invariants it owns). A unit is a top-level folder of src/,
// or a top-level file (src/errors.ts counts on its own). Left out of the import and length checks:
// src/sim/ (the simulation sits above everything it drives) and generated code. Prints each cycle
// with the imports that close it, each file too long (LONG_FILES_LEFT: the ones still to split may
// not grow), each folder without a README (READMES_LEFT: the ones still to write), and exits 1 if
// there is any; `--help` says so.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** The longest file of src/ the check lets pass, in lines (after Biome's formatting). */
export const FILE_LINES_MAX = 600;
/**
 * Files over the limit that issue 26 has still to split, at most as long as they are: a ratchet.
 * Each leaves this list when its split lands; none may grow meanwhile, and no other file may pass
 * the limit.
 */
export const LONG_FILES_LEFT: Readonly<Record<string, number>> = {};
/**
 * Folders directly under src/ still without a README.md, written once issue 26 has restructured
 * them: a ratchet. Each leaves this list when its README lands (the check fails while a listed
 * folder has one, or is gone), and no other folder may lack one.
 */
export const READMES_LEFT: readonly string[] = [];
/** The file every folder directly under src/ must hold. */
export const FOLDER_README = 'README.md';
/** Not judged: the simulation, and the protocol messages generated from Kafka's JSON schemas. */
export const EXCLUDED = ['sim/', 'protocol/messages/'];

export interface LayerReport {
  /** Each cycle of units, with one import per edge inside it (`file -> file`). */
  readonly cycles: { readonly units: string[]; readonly imports: string[] }[];
  /** Files over FILE_LINES_MAX, with their lines. */
  readonly longFiles: { readonly file: string; readonly lines: number }[];
}

export function checkLayers(srcRoot: string, longFilesLeft: Readonly<Record<string, number>> = {}): LayerReport {
  const root = resolve(srcRoot);
  const files = sourceFiles(root).filter((file) => !EXCLUDED.some((prefix) => relative(root, file).startsWith(prefix)));
  const edges = new Map<string, Map<string, string>>();
  const longFiles: { file: string; lines: number }[] = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > Math.max(FILE_LINES_MAX, longFilesLeft[relative(root, file)] ?? 0)) longFiles.push({ file: relative(root, file), lines });
    for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(file), match[1]!);
      if (!target.startsWith(`${root}/`)) continue;
      const [from, to] = [unitOf(root, file), unitOf(root, target)];
      if (from === to || to.startsWith('sim')) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      edges.set(from, out);
      if (!out.has(to)) out.set(to, `${relative(root, file)} -> ${relative(root, target)}`);
    }
  }
  const cycles = stronglyConnected(edges).map((units) => ({
    units: units.sort(),
    imports: units.flatMap((from) => [...(edges.get(from) ?? [])].filter(([to]) => units.includes(to)).map(([, example]) => example)).sort(),
  }));
  return { cycles, longFiles: longFiles.sort((a, b) => b.lines - a.lines) };
}

export interface ReadmeReport {
  /** Folders directly under the root without a README.md that `readmesLeft` does not excuse. */
  readonly missing: string[];
  /** Folders `readmesLeft` excuses that have a README.md now, or no longer exist: the list is to shrink. */
  readonly stale: string[];
}

/** Which folders directly under `srcRoot` lack a FOLDER_README, `readmesLeft` (folder names) aside. */
export function checkReadmes(srcRoot: string, readmesLeft: readonly string[] = []): ReadmeReport {
  const root = resolve(srcRoot);
  const folders = readdirSync(root).filter((name) => statSync(join(root, name)).isDirectory());
  const hasReadme = (folder: string): boolean => existsSync(join(root, folder, FOLDER_README));
  return {
    missing: folders.filter((folder) => !hasReadme(folder) && !readmesLeft.includes(folder)).sort(),
    stale: readmesLeft.filter((folder) => !folders.includes(folder) || hasReadme(folder)).sort(),
  };
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function unitOf(root: string, file: string): string {
  const parts = relative(root, file).split('/');
  return parts.length === 1 ? parts[0]! : `${parts[0]}/`;
}

/** Tarjan's strongly connected components of more than one unit. */
function stronglyConnected(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (unit: string): void => {
    index.set(unit, index.size);
    low.set(unit, index.get(unit)!);
    stack.push(unit);
    onStack.add(unit);
    for (const next of edges.get(unit)?.keys() ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(unit, Math.min(low.get(unit)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(unit, Math.min(low.get(unit)!, index.get(next)!));
    }
    if (low.get(unit) !== index.get(unit)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== unit);
    if (component.length > 1) components.push(component);
  };
  for (const unit of edges.keys()) if (!index.has(unit)) visit(unit);
  return components;
}

if (import.meta.main) {
  if (process.argv.includes('--help')) {
    console.log(
      `bun .ci/layer-check.ts [SRC]: fails (exit 1) when folders of SRC (default src) import each other in a cycle, a file passes ${FILE_LINES_MAX} lines (not ${EXCLUDED.join(', ')}), or a folder directly under SRC has no ${FOLDER_README} (not ${READMES_LEFT.join(', ')}, which are still to write)`,
    );
    process.exit(0);
  }
  const report = checkLayers(process.argv[2] ?? join(import.meta.dir, '..', 'src'), LONG_FILES_LEFT);
  for (const cycle of report.cycles) console.log(`cycle: ${cycle.units.join(' ')}\n${cycle.imports.map((line) => `  ${line}`).join('\n')}`);
  for (const { file, lines } of report.longFiles) console.log(`too long: ${file} has ${lines} lines (at most ${Math.max(FILE_LINES_MAX, LONG_FILES_LEFT[file] ?? 0)})`);
  for (const [file, lines] of Object.entries(LONG_FILES_LEFT)) console.log(`left to split (issue 26): ${file}, at most ${lines} lines until then`);
  const readmes = checkReadmes(process.argv[2] ?? join(import.meta.dir, '..', 'src'), READMES_LEFT);
  for (const folder of readmes.missing) console.log(`no ${FOLDER_README}: ${folder}/ (say what the folder is for, its face, what it may import and the invariants it owns)`);
  for (const folder of readmes.stale) console.log(`READMES_LEFT names ${folder}, which has a ${FOLDER_README} now or is gone: take it out of the list`);
  for (const folder of READMES_LEFT) if (!readmes.stale.includes(folder)) console.log(`left to write (issue 26): ${folder}/${FOLDER_README}`);
  const readmeFailures = readmes.missing.length + readmes.stale.length;
  const ok = report.cycles.length === 0 && report.longFiles.length === 0 && readmeFailures === 0;
  console.log(
    ok
      ? `layers: no folder cycle, no file over the limit, every folder with a ${FOLDER_README} (${READMES_LEFT.length} still to write)`
      : `layers: ${report.cycles.length} cycle(s), ${report.longFiles.length} file(s) too long, ${readmeFailures} ${FOLDER_README} problem(s)`,
  );
  process.exit(ok ? 0 : 1);
}
