// Closing at the file-descriptor limit (finding 18, adversarial review). A log's close writes its
// indexes and the clean-shutdown marker, each through a new temporary file; out of descriptors the
// first of those threw, the log's segments stayed open and its lock held, and the engine's close
// (a broker's SIGTERM) failed: exit code 1, as in the original report. Those files only save the
// next start a recovery scan, so a close that cannot write them must still close, and the next
// start recover everything from the segments.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { Ferry } from '../../src/ferry/index.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(60_000);

const TOPICS = 5;
const FD_LIMIT = 256;
const CHILD = join(import.meta.dir, '../support/close-at-fd-limit.ts');

test('an engine closed with no file descriptor left closes, and the next start recovers every record', async () => {
  const directory = tempDir();
  const child = Bun.spawn(['bash', '-c', `ulimit -n ${FD_LIMIT} && exec "$@"`, 'bash', process.execPath, CHILD, directory, String(TOPICS)], { stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, stderr: stderr.trim(), outcome: stdout.trim() }).toEqual({ code: 0, stderr: '', outcome: 'closed' });

  const engine = await Ferry.open({ directory });
  try {
    for (let i = 0; i < TOPICS; i++) {
      const { batches } = engine.fetch(`t${i}`, 0, 0);
      expect(batches.flatMap((batch) => [...batch.records()].map((record) => new TextDecoder().decode(record.value!)))).toEqual([`v${i}`]);
    }
  } finally {
    await engine.close();
  }
});
