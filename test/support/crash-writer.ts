// A child process for crash tests: appends numbered batches to the log in argv[2] and prints
// "ack <lastOffset>" once each is durable, until it is killed. With argv[4] and argv[5] (a root
// directory holding argv[2], and a journal outside it) its fsyncs are recorded instead of made,
// so that the parent can simulate a power loss (power-loss.ts) after killing it.
import { PartitionLog } from '../../src/log/partition-log.ts';
import { batchOf } from './batches.ts';
import { PowerLossRecorder } from './power-loss.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';

const [directory, policy = 'group', root, journal] = process.argv.slice(2);
if (directory === undefined) throw new Error('usage: crash-writer <dir> [per-append|group] [<power-loss root> <journal>]');
const flush = policy === 'per-append' ? ({ kind: 'per-append' } as const) : ({ kind: 'group', bytes: 64 * 1024, ms: 1 } as const);
const disk = root !== undefined && journal !== undefined ? diskWithSync(systemDisk, new PowerLossRecorder(root, journal)) : undefined;
const log = PartitionLog.open(directory, { config: { segmentBytes: 64 * 1024, flush }, disk });
const inFlight = 8;
let sequence = 0;
async function producer(): Promise<void> {
  for (;;) {
    const { lastOffset } = log.append(batchOf(`n${sequence++}`, 3, Date.now(), 100), 0);
    await log.waitForFlush(lastOffset);
    process.stdout.write(`ack ${lastOffset}\n`);
  }
}
await Promise.all(Array.from({ length: inFlight }, producer));
