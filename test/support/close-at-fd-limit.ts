// A child for test/log/close-at-fd-limit.test.ts: opens an engine with a few topics, uses up
// every file descriptor left, closes the engine and prints how that went (then frees them).
import { closeSync, openSync } from 'node:fs';
import { Ferry } from '../../src/ferry/index.ts';

const directory = process.argv[2]!;
const topics = Number(process.argv[3]);
const engine = await Ferry.open({ directory, log: { flush: { kind: 'none' } } });
for (let i = 0; i < topics; i++) {
  await engine.createTopic(`t${i}`, { partitions: 1 });
  await engine.produce(`t${i}`, [{ value: `v${i}` }]);
}
const held: number[] = [];
try {
  for (;;) held.push(openSync('/dev/null', 'r'));
} catch {
  // EMFILE: the process is at its limit
}
let outcome: string;
try {
  await engine.close();
  outcome = 'closed';
} catch (error) {
  outcome = `close failed: ${error instanceof Error ? error.message : String(error)}`;
}
for (const fd of held) closeSync(fd);
console.log(outcome);
