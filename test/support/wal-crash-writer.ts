// A child process for WAL crash tests: an engine shipping its appends to a file store; prints
// "ack <partition> <lastOffset>" once each produce is acknowledged (acks=all: durable in the WAL).
// With argv[4] (a journal directory) the store's fsyncs are recorded instead of made, so that the
// parent can simulate a power loss of the store's disk (power-loss.ts) after killing it.
import { Ferry } from '../../src/ferry/index.ts';
import { FileStore } from '../../src/store/file.ts';
import { PowerLossRecorder } from './power-loss.ts';

const [directory, storeRoot, journal] = process.argv.slice(2);
if (directory === undefined || storeRoot === undefined) throw new Error('usage: wal-crash-writer <dir> <store root> [<journal>]');
const store = await FileStore.open(storeRoot, { files: journal === undefined ? undefined : new PowerLossRecorder(storeRoot, journal) });
const ferry = await Ferry.open({ directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'crashy', config: { uploadBytes: 4096, uploadIntervalMs: 1 } } });
if (ferry.topics().length === 0) ferry.createTopic('t', { partitions: 2 });
let sequence = 0;
async function producer(partition: number): Promise<void> {
  for (;;) {
    const produced = await ferry.produce('t', [{ value: `p${partition}-${sequence++}` }, { value: 'x'.repeat(50) }], { partition });
    process.stdout.write(`ack ${partition} ${produced.at(-1)!.offset}\n`);
  }
}
await Promise.all([0, 0, 1, 1].map(producer));
