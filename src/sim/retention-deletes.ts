import type { RetentionDeletion } from '../engine/index.ts';
import { LOG_FILE_SUFFIX } from '../log/segment.ts';
import type { Disk } from '../util/disk.ts';
import type { RetentionDelete } from './history.ts';

/**
 * Records every retention pass that deleted local segments, on any broker (leader or follower),
 * with the node, the simulated moment (the engine's `onRetention`, which production never sets)
 * and the bytes the log kept, read off the broker's disk by the harness: what retention-kept
 * judges against retention.bytes and retention.ms.
 */
export class RetentionDeletes {
  readonly #nowMs: () => number;
  readonly #deletes: RetentionDelete[] = [];

  /** `nowMs`: on the ops' time base. */
  constructor(nowMs: () => number) {
    this.#nowMs = nowMs;
  }

  /** The engine option of one broker host. */
  recorderOf(node: number, disk: Pick<Disk, 'readdirSync' | 'readFileSync'>): (deletion: RetentionDeletion) => void {
    return ({ directory, ...deletion }) => this.#deletes.push({ node, atMs: this.#nowMs(), ...deletion, keptBytes: segmentBytesFrom(disk, directory, deletion.toOffset) });
  }

  get deletes(): readonly RetentionDelete[] {
    return this.#deletes;
  }
}

/** The bytes of a log directory's segment files from `fromOffset` on (a segment file is named by its base offset): the log's size as retention.bytes counts it. */
function segmentBytesFrom(disk: Pick<Disk, 'readdirSync' | 'readFileSync'>, directory: string, fromOffset: number): number {
  let bytes = 0;
  for (const name of disk.readdirSync(directory)) {
    if (!name.endsWith(LOG_FILE_SUFFIX) || Number(name.slice(0, -LOG_FILE_SUFFIX.length)) < fromOffset) continue;
    bytes += disk.readFileSync(`${directory}/${name}`).length;
  }
  return bytes;
}
