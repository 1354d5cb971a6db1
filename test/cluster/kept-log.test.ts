// [K3] A kept log is cut back to what the chain proves, never below: records past the chain's end
// were never durable anywhere a new leader can prove, so it must not serve them.
import { expect, test } from 'bun:test';
import { keepOnlyWhatTheChainProves } from '../../src/cluster/kept-log.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { batchOf } from '../support/batches.ts';

function logOf(batches: number): PartitionLog {
  const log = PartitionLog.open('/data/t-0', { clock: new ManualClock(), disk: new SimDisk({ random: new SeededRandom(1) }) });
  for (let i = 0; i < batches; i++) log.append(batchOf(`b-${i}`, 2), 0);
  return log;
}

test('a kept log past the chain end is truncated to it', async () => {
  const log = logOf(5); // offsets [0, 10)
  const said: string[] = [];
  keepOnlyWhatTheChainProves(log, 6, (message) => said.push(message));
  expect(log.logEndOffset).toBe(6);
  expect(said).toEqual(["the kept log ends at 10, past the chain's end 6: truncated to it"]);
  await log.close();
});

test('a kept log within the chain is left whole', async () => {
  const log = logOf(5);
  const said: string[] = [];
  keepOnlyWhatTheChainProves(log, 10, (message) => said.push(message));
  keepOnlyWhatTheChainProves(log, 12, (message) => said.push(message));
  expect(log.logEndOffset).toBe(10);
  expect(said).toEqual([]);
  await log.close();
});
