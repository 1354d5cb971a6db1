import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `NAME=value` words that open a shell command, before its program. */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$/;

/**
 * The environment `npm start` gives the broker: the `NAME=value` assignments its script in
 * package.json opens with (MIMALLOC_PURGE_DELAY: README, under `npm start`), so a bench that starts the
 * broker itself runs it as `npm start` does without a second copy of the settings.
 */
export function npmStartEnvironment(repositoryRoot: string): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const script = manifest.scripts?.start;
  if (script === undefined) throw new Error('package.json has no start script');
  const environment: Record<string, string> = {};
  for (const word of script.trim().split(/\s+/)) {
    const assignment = ASSIGNMENT.exec(word);
    if (assignment === null) break;
    environment[assignment[1]!] = assignment[2]!;
  }
  return environment;
}
