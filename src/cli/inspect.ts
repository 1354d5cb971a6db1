import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../errors.ts';
import { LOG_OVERHEAD_BYTES, parseBatchAt } from '../format/index.ts';
import { CliError, parseCommandArgs } from './args.ts';

const USAGE = `usage: ferry inspect [options] <segment.log | partition directory>

Prints each record batch: offsets, record count, size, leader epoch, compression, timestamps,
and whether its CRC32C is valid. Stops at the first invalid batch and says why.

options:
  --records      print every record's offset, key and value too
  -h, --help     this text`;

/** Largest batch inspect accepts; anything bigger is reported as corrupt. */
const INSPECT_BATCH_BYTES_MAX = 0x7fffffff;

export async function runInspect(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(args, { records: { type: 'boolean', default: false } }, USAGE);
  if (parsed === null) return;
  const target = parsed.positionals[0];
  if (target === undefined) throw new CliError(`a segment file or partition directory is required\n\n${USAGE}`);
  if (!existsSync(target)) throw new CliError(`${target} does not exist`);
  const files = statSync(target).isDirectory() ? readdirSync(target).filter((n) => n.endsWith('.log')).sort().map((n) => join(target, n)) : [target];
  for (const file of files) inspectFile(file, parsed.values.records === true);
}

function inspectFile(path: string, withRecords: boolean): void {
  const bytes = readFileSync(path);
  console.log(`${path}: ${bytes.length} bytes`);
  let position = 0;
  let batches = 0;
  while (position < bytes.length) {
    let batch;
    try {
      batch = parseBatchAt(bytes, position, INSPECT_BATCH_BYTES_MAX);
    } catch (error) {
      if (!isFerryError(error)) throw error;
      console.log(`  INVALID at byte ${position}: ${error.message}`);
      process.exitCode = 1;
      return;
    }
    if (batch === null) {
      console.log(`  TORN TAIL: ${bytes.length - position} bytes at ${position} are not a whole batch (need at least ${LOG_OVERHEAD_BYTES})`);
      process.exitCode = 1;
      return;
    }
    console.log(`  offsets ${batch.baseOffset}..${batch.lastOffset} records=${batch.recordCount} bytes=${batch.sizeInBytes} position=${position} epoch=${batch.partitionLeaderEpoch} compression=${batch.compression} maxTimestamp=${new Date(batch.maxTimestamp).toISOString()} crc=ok`);
    if (withRecords) {
      for (const record of batch.records()) {
        const text = (b: Uint8Array | null) => (b === null ? 'null' : JSON.stringify(new TextDecoder().decode(b.subarray(0, 80))));
        console.log(`    ${record.offset} key=${text(record.key)} value=${text(record.value)}`);
      }
    }
    position += batch.sizeInBytes;
    batches++;
  }
  console.log(`  ${batches} batches, all valid`);
}
