/**
 * `ferry cost`: a month's bill for a deployment, Ferry beside classic Kafka, line by line, from
 * the cost model (src/cost, docs/cost-model.md). Bad numbers are one line and exit 2.
 */
import { type Bill, checkDeployment, compare, type Comparison, DEFAULT_DEPLOYMENT, type Deployment, DeploymentError, NOT_MODELLED } from '../cost/index.ts';
import { CliError, parseCommandArgs } from './args.ts';

const d = DEFAULT_DEPLOYMENT;
const USAGE = `usage: ferry cost [options]

A 30-day month's bill for a steady produce rate: Ferry (WAL on S3 Express One Zone, history in
S3 Standard, a short local retention on gp3) beside classic Kafka (every replica on gp3, replicas
across zones), line by line, us-east-1 list prices. docs/cost-model.md has every price with its
source and every assumption.

options:
  --throughput-mb-s N        records produced, MB (10^6 B) per second (default ${d.throughputMbPerSecond})
  --retention-hours N        how long every byte is kept (default ${d.retentionHours})
  --retention-days N         the same in days
  --partitions N             partitions in all (default ${d.partitions})
  --replication N            replicas per partition, both systems (default ${d.replication})
  --zones N                  availability zones brokers and clients spread over (default ${d.zones})
  --brokers N                brokers; each leader writes its own WAL stream (default ${d.brokers})
  --read-fanout N            consumer groups reading every byte (default ${d.readFanout})
  --produce-kb N             KiB per produce request (default ${d.produceBytes / 1024}: batch.size)
  --upload-kb N              Ferry WAL uploadBytes in KiB (default ${d.ferry.uploadBytes / 1024})
  --upload-interval-ms N     Ferry WAL uploadIntervalMs (default ${d.ferry.uploadIntervalMs})
  --no-upload-when-idle      Ferry's WAL waits for the size or interval even when idle (as ferry broker's flag)
  --segment-mb N             segment.bytes in MiB (default ${d.ferry.segmentBytes / 2 ** 20})
  --local-retention-hours N  Ferry's local.retention on each replica (default ${d.ferry.localRetentionHours})
  --json                     print the comparison as JSON
  -h, --help                 this text`;

/** The flag that sets each Deployment field, so a refusal names what the user typed. */
const FLAG_OF: Readonly<Record<string, string>> = {
  throughputMbPerSecond: '--throughput-mb-s',
  retentionHours: '--retention-hours/--retention-days',
  partitions: '--partitions',
  replication: '--replication',
  zones: '--zones',
  brokers: '--brokers',
  readFanout: '--read-fanout',
  produceBytes: '--produce-kb',
  'ferry.uploadBytes': '--upload-kb',
  'ferry.uploadIntervalMs': '--upload-interval-ms',
  'ferry.segmentBytes': '--segment-mb',
  'ferry.localRetentionHours': '--local-retention-hours',
};

type Values = { readonly [name: string]: string | boolean | undefined };

/** A number flag: finite and >= 0, else one line naming the flag. Ranges are the model's to check. */
function numberFlag(values: Values, name: string, fallback: number): number {
  const text = values[name];
  if (text === undefined) return fallback;
  const value = typeof text === 'string' && text.trim() !== '' ? Number(text) : Number.NaN;
  if (!Number.isFinite(value) || value < 0) throw new CliError(`--${name} must be a number >= 0, got '${String(text)}'`);
  return value;
}

function retentionHours(values: Values): number {
  if (values['retention-hours'] !== undefined && values['retention-days'] !== undefined) throw new CliError('give --retention-hours or --retention-days, not both');
  if (values['retention-days'] !== undefined) return numberFlag(values, 'retention-days', 0) * 24;
  return numberFlag(values, 'retention-hours', d.retentionHours);
}

/** The deployment the flags describe (defaults elsewhere), checked by the model's ranges. */
export function deploymentOf(values: Values): Deployment {
  const deployment: Deployment = {
    throughputMbPerSecond: numberFlag(values, 'throughput-mb-s', d.throughputMbPerSecond),
    retentionHours: retentionHours(values),
    partitions: numberFlag(values, 'partitions', d.partitions),
    replication: numberFlag(values, 'replication', d.replication),
    zones: numberFlag(values, 'zones', d.zones),
    brokers: numberFlag(values, 'brokers', values.replication === undefined ? d.brokers : Math.max(d.brokers, numberFlag(values, 'replication', d.replication))),
    readFanout: numberFlag(values, 'read-fanout', d.readFanout),
    produceBytes: numberFlag(values, 'produce-kb', d.produceBytes / 1024) * 1024,
    ferry: {
      ...d.ferry,
      uploadBytes: numberFlag(values, 'upload-kb', d.ferry.uploadBytes / 1024) * 1024,
      uploadIntervalMs: numberFlag(values, 'upload-interval-ms', d.ferry.uploadIntervalMs),
      uploadWhenIdle: values['no-upload-when-idle'] !== true && d.ferry.uploadWhenIdle,
      segmentBytes: numberFlag(values, 'segment-mb', d.ferry.segmentBytes / 2 ** 20) * 2 ** 20,
      localRetentionHours: numberFlag(values, 'local-retention-hours', d.ferry.localRetentionHours),
    },
  };
  try {
    return checkDeployment(deployment);
  } catch (error) {
    if (error instanceof DeploymentError) throw new CliError(`${FLAG_OF[error.field] ?? error.field}${error.message.slice(error.field.length)}`);
    throw error;
  }
}

const dollars = (usd: number): string => `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

function billText(bill: Bill): string[] {
  const itemWidth = Math.max(...bill.lines.map((line) => line.item.length));
  const usdWidth = Math.max(...bill.lines.map((line) => dollars(line.usdPerMonth).length), dollars(bill.totalUsdPerMonth).length);
  return [
    `${bill.system}`,
    ...bill.lines.map((line) => `  ${line.item.padEnd(itemWidth)}  ${dollars(line.usdPerMonth).padStart(usdWidth)}  ${line.quantity}`),
    `  ${'total per month'.padEnd(itemWidth)}  ${dollars(bill.totalUsdPerMonth).padStart(usdWidth)}`,
  ];
}

/** The bill as printed: the deployment, both systems line by line, the ratio, what is not modelled. */
export function comparisonText(comparison: Comparison): string {
  const x = comparison.deployment;
  const header = `${x.throughputMbPerSecond} MB/s, ${x.retentionHours} h retention, ${x.partitions} partitions, replication ${x.replication}, ${x.zones} zones, ${x.brokers} brokers, read fan-out ${x.readFanout}; a 30-day month, us-east-1 list prices (GB = 2^30 B)`;
  const ratio = Number.isFinite(comparison.kafkaOverFerry) ? `${comparison.kafkaOverFerry.toFixed(2)}x` : 'n/a (Ferry bills nothing)';
  return [header, '', ...billText(comparison.ferry), '', ...billText(comparison.kafka), '', `classic Kafka / Ferry: ${ratio}`, '', 'not modelled:', ...NOT_MODELLED.map((line) => `  - ${line}`)].join(
    '\n',
  );
}

export async function runCost(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(
    args,
    {
      'throughput-mb-s': { type: 'string' },
      'retention-hours': { type: 'string' },
      'retention-days': { type: 'string' },
      partitions: { type: 'string' },
      replication: { type: 'string' },
      zones: { type: 'string' },
      brokers: { type: 'string' },
      'read-fanout': { type: 'string' },
      'produce-kb': { type: 'string' },
      'upload-kb': { type: 'string' },
      'upload-interval-ms': { type: 'string' },
      'no-upload-when-idle': { type: 'boolean' },
      'segment-mb': { type: 'string' },
      'local-retention-hours': { type: 'string' },
      json: { type: 'boolean' },
    },
    USAGE,
  );
  if (parsed === null) return;
  if (parsed.positionals.length > 0) throw new CliError(`unexpected argument '${parsed.positionals[0]}'`);
  const comparison = compare(deploymentOf(parsed.values));
  console.log(parsed.values.json === true ? JSON.stringify({ ...comparison, notModelled: NOT_MODELLED }, null, 2) : comparisonText(comparison));
}
