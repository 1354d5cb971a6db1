/** A partition directory (`<topic>-<partition>`): its segments, leader epochs and producer snapshots. */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { LEADER_EPOCH_CHECKPOINT_FILE } from '../../log/leader-epoch-cache.ts';
import { batchLine, scanSegment, type SegmentReport } from './segment.ts';

const SEGMENT_SUFFIX = '.log';
const SNAPSHOT_SUFFIX = '.snapshot';
const PARTITION_METADATA_FILE = 'partition.metadata';
/** Kafka's partition directory name: the topic, a dash, the partition number. */
const PARTITION_DIRECTORY_PATTERN = /^(.+)-(\d+)$/;

export interface PartitionReport {
  readonly kind: 'partition';
  readonly path: string;
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string | null;
  readonly segments: readonly SegmentReport[];
  /** The leader-epoch checkpoint: which epoch wrote from which offset. */
  readonly epochs: readonly { readonly epoch: number; readonly startOffset: number }[];
  /** Offsets of the producer-state snapshots (`<offset>.snapshot`). */
  readonly snapshots: readonly number[];
  readonly ok: boolean;
}

/** Whether `path` looks like a partition directory: Kafka's name, and a segment or partition.metadata inside. */
export function isPartitionDirectory(path: string): boolean {
  if (!PARTITION_DIRECTORY_PATTERN.test(basename(path)) || !statSync(path).isDirectory()) return false;
  return existsSync(join(path, PARTITION_METADATA_FILE)) || readdirSync(path).some((name) => name.endsWith(SEGMENT_SUFFIX));
}

/** Whether `path` holds segments at all (a partition directory under another name still inspects). */
export function holdsSegments(path: string): boolean {
  return readdirSync(path).some((name) => name.endsWith(SEGMENT_SUFFIX));
}

export function inspectPartition(path: string): PartitionReport {
  const match = PARTITION_DIRECTORY_PATTERN.exec(basename(path));
  const names = readdirSync(path).sort();
  const segments = names.filter((name) => name.endsWith(SEGMENT_SUFFIX)).map((name) => scanSegment(join(path, name), readFileSync(join(path, name))));
  const snapshots = names
    .filter((name) => name.endsWith(SNAPSHOT_SUFFIX))
    .map((name) => Number(name.slice(0, -SNAPSHOT_SUFFIX.length)))
    .filter(Number.isSafeInteger);
  return {
    kind: 'partition',
    path,
    topic: match?.[1] ?? basename(path),
    partition: match === null ? -1 : Number(match[2]),
    topicId: topicIdOf(path),
    segments,
    epochs: epochsOf(path),
    snapshots,
    ok: segments.every((segment) => segment.problem === null),
  };
}

/** `topic_id: ...` from partition.metadata (Kafka's format), or null without one. */
function topicIdOf(path: string): string | null {
  const file = join(path, PARTITION_METADATA_FILE);
  if (!existsSync(file)) return null;
  return /^topic_id:\s*(\S+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? null;
}

/** Kafka's leader-epoch-checkpoint text: a version line, a count line, then `epoch startOffset` lines. */
function epochsOf(path: string): PartitionReport['epochs'] {
  const file = join(path, LEADER_EPOCH_CHECKPOINT_FILE);
  if (!existsSync(file)) return [];
  const lines = readFileSync(file, 'utf8').split('\n').slice(2);
  return lines
    .map((line) => line.trim().split(/\s+/).map(Number))
    .filter((pair) => pair.length === 2 && pair.every(Number.isSafeInteger))
    .map(([epoch, startOffset]) => ({ epoch: epoch!, startOffset: startOffset! }));
}

/** First and last offset over the partition's segments; null when it holds no batch. */
export function offsetRange(report: PartitionReport): { first: number; last: number } | null {
  const batches = report.segments.flatMap((segment) => segment.batches);
  return batches.length === 0 ? null : { first: batches[0]!.baseOffset, last: batches.at(-1)!.lastOffset };
}

/** One line: the partition's summary, as a data directory lists it. */
export function partitionSummary(report: PartitionReport): string {
  const range = offsetRange(report);
  const bytes = report.segments.reduce((sum, segment) => sum + segment.bytes, 0);
  const batches = report.segments.reduce((sum, segment) => sum + segment.batches.length, 0);
  const epoch = report.epochs.at(-1);
  const problems = report.segments.filter((segment) => segment.problem !== null).length;
  return `${report.topic}-${report.partition}: segments=${report.segments.length} offsets=${range === null ? 'none' : `${range.first}..${range.last}`} batches=${batches} bytes=${bytes} leaderEpoch=${epoch === undefined ? 'none' : `${epoch.epoch} (from offset ${epoch.startOffset}, ${report.epochs.length} epochs)`} producerSnapshots=${report.snapshots.length}${problems === 0 ? ' crc=ok' : ` BAD: ${problems} damaged segments`}`;
}

export function partitionLines(report: PartitionReport, withBatches: boolean): string[] {
  const lines = [`partition ${report.path}: ${partitionSummary(report)}${report.topicId === null ? '' : ` topicId=${report.topicId}`}`];
  for (const segment of report.segments) {
    const first = segment.batches[0];
    const last = segment.batches.at(-1);
    lines.push(
      `  segment ${basename(segment.path)}: offsets ${first === undefined ? 'none' : `${first.baseOffset}..${last!.lastOffset}`} batches=${segment.batches.length} bytes=${segment.bytes} ${segment.problem === null ? 'crc=ok' : segment.problem}`,
    );
    if (withBatches) for (const batch of segment.batches) lines.push(`    ${batchLine(batch)}`);
  }
  return lines;
}
