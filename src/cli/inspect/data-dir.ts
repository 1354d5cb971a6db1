/** A data directory (a broker's --data, the engine's directory): a summary line per partition, and the WAL objects its file store holds. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inspectPartition, isPartitionDirectory, type PartitionReport, partitionSummary } from './partition.ts';

const TOPICS_FILE = 'topics.json';
/** Where `ferry broker` keeps its default file store, and where that store keeps WAL objects: `<data>/objects/objects/…/wal.d/…`. */
const FILE_STORE_DIR = 'objects';
const FILE_STORE_OBJECTS_DIR = 'objects';
const WAL_DIRECTORY_NAME = 'wal.d';
const OBJECT_FILE_SUFFIX = '.o';

export interface DataDirectoryReport {
  readonly kind: 'data-directory';
  readonly path: string;
  /** Topics the registry (topics.json) lists, or null if there is none. */
  readonly topics: number | null;
  /** Summaries only: the batches are left out (inspect a partition directory for them). */
  readonly partitions: readonly Omit<PartitionReport, 'segments'>[];
  readonly partitionLines: readonly string[];
  /** WAL objects in the default file store under the directory, and where they are. */
  readonly walObjects: { readonly count: number; readonly directory: string } | null;
  readonly ok: boolean;
}

/** Whether `path` is a data directory: a topic registry, or partition directories inside. */
export function isDataDirectory(path: string): boolean {
  return existsSync(join(path, TOPICS_FILE)) || readdirSync(path).some((name) => isPartitionDirectory(join(path, name)));
}

export function inspectDataDirectory(path: string): DataDirectoryReport {
  const reports = readdirSync(path)
    .filter((name) => isPartitionDirectory(join(path, name)))
    .map((name) => inspectPartition(join(path, name)));
  reports.sort((a, b) => (a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1));
  return {
    kind: 'data-directory',
    path,
    topics: topicCount(path),
    partitions: reports.map(({ segments: _, ...summary }) => summary),
    partitionLines: reports.map(partitionSummary),
    walObjects: walObjectsOf(path),
    ok: reports.every((report) => report.ok),
  };
}

function topicCount(path: string): number | null {
  const file = join(path, TOPICS_FILE);
  if (!existsSync(file)) return null;
  try {
    const topics = (JSON.parse(readFileSync(file, 'utf8')) as { topics?: unknown }).topics;
    return Array.isArray(topics) ? topics.length : null;
  } catch {
    return null;
  }
}

/** Counts the object files under every `wal.d` of the default file store. */
function walObjectsOf(path: string): DataDirectoryReport['walObjects'] {
  const objects = join(path, FILE_STORE_DIR, FILE_STORE_OBJECTS_DIR);
  if (!existsSync(objects)) return null;
  const files = readdirSync(objects, { recursive: true, encoding: 'utf8' });
  const wal = files.filter((file) => file.split('/').includes(WAL_DIRECTORY_NAME) && file.endsWith(OBJECT_FILE_SUFFIX));
  return { count: wal.length, directory: objects };
}

export function dataDirectoryLines(report: DataDirectoryReport): string[] {
  const lines = [`data directory ${report.path}: ${report.topics === null ? 'no topic registry' : `${report.topics} topics`}, ${report.partitions.length} partitions`];
  for (const line of report.partitionLines) lines.push(`  ${line}`);
  if (report.walObjects !== null) lines.push(`  WAL objects in the file store: ${report.walObjects.count} under ${report.walObjects.directory} (inspect one: ferry inspect <its .o file>)`);
  if (!report.ok) lines.push('  BAD: damaged segments; inspect their partition directories for where');
  return lines;
}
