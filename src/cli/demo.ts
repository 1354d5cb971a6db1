import { Engine } from '../engine/index.ts';
import { selectedCrc32c } from '../format/index.ts';
import { parseCommandArgs, positiveInteger } from './args.ts';

const USAGE = `usage: ferry demo [options]

Opens the embedded engine on a directory, creates a topic, produces records with acks=all
(durable under group commit), consumes them back and prints throughput.

options:
  --dir PATH          data directory (default ./data-demo: its own, so it runs beside 'ferry broker' on ./data)
  --topic NAME        topic (default demo)
  --partitions N      partitions when the topic is created (default 3)
  --records N         records to produce (default 200000)
  --record-bytes N    value size in bytes (default 100)
  --batch N           records per produce call (default 500)
  -h, --help          this text`;

/** Not the broker's ./data: a demo started while `npm start` runs would find that directory locked. */
export const DEMO_DIRECTORY_DEFAULT = './data-demo';

/** Progress lines at most this often, so a long run shows it is alive without flooding. */
const PROGRESS_INTERVAL_MS = 1000;

export async function runDemo(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(
    args,
    {
      dir: { type: 'string', default: DEMO_DIRECTORY_DEFAULT },
      topic: { type: 'string', default: 'demo' },
      partitions: { type: 'string' },
      records: { type: 'string' },
      'record-bytes': { type: 'string' },
      batch: { type: 'string' },
    },
    USAGE,
  );
  if (parsed === null) return;
  const { values } = parsed;
  const partitions = positiveInteger('partitions', values.partitions, 3);
  const total = positiveInteger('records', values.records, 200_000);
  const recordBytes = positiveInteger('record-bytes', values['record-bytes'], 100);
  const batchSize = positiveInteger('batch', values.batch, 500);
  const topic = values.topic as string;

  const ferry = await Engine.open({ directory: values.dir as string });
  try {
    if (!ferry.topics().some((t) => t.name === topic)) ferry.createTopic(topic, { partitions });
    const partitionCount = ferry.topics().find((t) => t.name === topic)!.partitions;
    console.log(`ferry demo: ${values.dir}, topic ${topic} (${partitionCount} partitions), CRC32C: ${selectedCrc32c().name}`);
    const startOffsets = Array.from({ length: partitionCount }, (_, p) => ferry.fetch(topic, p, 0).highWatermark);
    await produce(ferry, topic, total, recordBytes, batchSize);
    await consume(ferry, topic, startOffsets, total);
  } finally {
    await ferry.close();
  }
}

async function produce(ferry: Engine, topic: string, total: number, recordBytes: number, batchSize: number): Promise<void> {
  const value = new Uint8Array(recordBytes).fill(0x61);
  const started = performance.now();
  let lastProgress = started;
  let partition = 0;
  const partitions = ferry.topics().find((t) => t.name === topic)!.partitions;
  for (let sent = 0; sent < total; ) {
    const count = Math.min(batchSize, total - sent);
    const records = Array.from({ length: count }, (_, i) => ({ key: `key-${sent + i}`, value }));
    await ferry.produce(topic, records, { partition });
    partition = (partition + 1) % partitions;
    sent += count;
    if (performance.now() - lastProgress > PROGRESS_INTERVAL_MS) {
      lastProgress = performance.now();
      console.log(`  produced ${sent}/${total}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const megabytes = (total * recordBytes) / 1e6;
  console.log(
    `produced ${total} records (${megabytes.toFixed(1)} MB of values) in ${seconds.toFixed(2)} s: ${(total / seconds).toFixed(0)} records/s, ${(megabytes / seconds).toFixed(1)} MB/s, acks=all`,
  );
}

async function consume(ferry: Engine, topic: string, startOffsets: number[], total: number): Promise<void> {
  const started = performance.now();
  let count = 0;
  for (let partition = 0; partition < startOffsets.length; partition++) {
    let offset = startOffsets[partition]!;
    const end = ferry.fetch(topic, partition, offset).highWatermark;
    while (offset < end) {
      const { batches } = ferry.fetch(topic, partition, offset, { maxBytes: 1 << 20 });
      for (const batch of batches) {
        for (const record of batch.records()) if (record.offset >= offset) count++;
        offset = batch.nextOffset;
      }
    }
    console.log(`  partition ${partition}: offsets ${startOffsets[partition]}..${end - 1}`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`consumed ${count} records in ${seconds.toFixed(2)} s: ${(count / seconds).toFixed(0)} records/s${count === total ? '' : ` (expected ${total}!)`}`);
  if (count !== total) process.exitCode = 1;
}
