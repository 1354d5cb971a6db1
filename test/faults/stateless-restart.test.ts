// Issue 24 "Done when", bounded: a single `ferry broker` whose WAL store lies outside its data
// directory is stateless. An idempotent acks=all producer (kafkajs) rides through 5 kill -9
// restarts, 2 or more on a removed data directory (a replaced instance), and through SIGTERM to
// `npm start` (what a supervisor sends), again with the directory removed: 0 lost, 0 duplicated,
// every record at the offset its acknowledgement named. At d904e31 a lone broker on an empty disk
// deleted its WAL objects at its first GC pass and started its topics over at offset 0.
// The longer form: `bun test/faults/idempotent-restart-runs.ts --wipes 2 --help`.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { describeVerdict } from '../support/ack-ledger.ts';
import { tempDir } from '../support/temp-dir.ts';
import { runIdempotentRestart } from './idempotent-restart-scenario.ts';

setDefaultTimeout(240_000); // broker restarts are slow on a loaded machine; no timing is asserted

const RECORDS = 400;

test('a lone broker through 5 kill -9 restarts, 2 on a removed data directory: nothing lost, duplicated or misplaced', async () => {
  const { verdict, faults } = await runIdempotentRestart({ seed: 24, directory: tempDir(), records: RECORDS, restarts: 5, wipes: 2, stops: ['kill -9'], partitions: 2 });
  const summary = `${faults.join(', ')}: ${describeVerdict(verdict)}`;
  expect(faults.filter((fault) => fault.startsWith('kill -9')).length).toBe(5);
  expect(faults.filter((fault) => fault.endsWith('data directory removed')).length).toBe(2);
  expect(verdict.acknowledged).toBe(RECORDS);
  expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, summary }).toEqual({ lost: 0, duplicated: 0, misplaced: 0, summary });
});

test('the same through SIGTERM to npm start, twice on a removed data directory', async () => {
  const { verdict, faults } = await runIdempotentRestart({ seed: 25, directory: tempDir(), records: RECORDS, restarts: 3, wipes: 2, stops: ['SIGTERM'], launcher: 'npm start', partitions: 2 });
  const summary = `${faults.join(', ')}: ${describeVerdict(verdict)}`;
  expect(faults.filter((fault) => fault.endsWith('data directory removed')).length).toBe(2);
  expect(verdict.acknowledged).toBe(RECORDS);
  expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, summary }).toEqual({ lost: 0, duplicated: 0, misplaced: 0, summary });
});
