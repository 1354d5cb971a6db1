// Review of issue 9 finding 12 (KIP-392): a follower's high watermark lags the leader's (it learns
// it from the answers to its reports), so a consumer the leader sends there at a committed offset
// often asks for an offset the follower applied but does not yet know to be committed. Kafka
// answers such a fetch (past the high watermark, not past the log end) with no records, and the
// consumer long-polls; OFFSET_OUT_OF_RANGE instead makes it reset its position (auto.offset.reset:
// skipping or re-reading records) or bounce back to the leader.
import { expect, test } from 'bun:test';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

test('a follower fetch past its high watermark but within what it applied answers no records, not OffsetOutOfRange', async () => {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy(), wal: { store: new MemoryStore(), writerId: 'f' } });
  const follower = await ferry.adoptPartition('t', idOf('t'), 0, 1, async (log) => void log.append(batchOf('sealed'), 0), 'follower', 3);
  follower.log.append(batchOf('applied', 2), 0); // applied from the leader's stream, not yet known committed
  follower.noteApplied();
  expect({ highWatermark: follower.highWatermark, logEnd: follower.log.logEndOffset }).toEqual({ highWatermark: 1, logEnd: 3 });
  for (const offset of [1, 2, 3]) {
    const outcome = (() => {
      try {
        const { batches, highWatermark } = ferry.fetch('t', 0, offset);
        return { offset, batches: batches.length, highWatermark };
      } catch (error) {
        return { offset, error: isFerryError(error) ? error.kind : String(error) };
      }
    })();
    expect(outcome).toEqual({ offset, batches: 0, highWatermark: 1 });
  }
  expect(() => ferry.fetch('t', 0, 4)).toThrow(/past/); // past the log end: out of range, as in Kafka
  await ferry.close();
});
