// Review of issue 27's withWalFlushDefault: an embedded engine with a WAL now leaves its local log
// unsynced (flush 'none') unless told otherwise. After a power loss, OwnPartitions finds a lost
// tail only where the WAL's shipped ends (the shipped checkpoint, saved every second, plus the
// objects after it) lie above the recovered local log. WAL GC deletes objects whose frames the tier
// covers, so the records acknowledged after the last checkpoint, tiered and collected since, show
// in neither: the local log recovers to its last sync (a roll), below them, no rebuild runs, and
// the partition serves a log that ends below offsets acks=all named. The next append takes those
// offsets again, for other records, while the tier holds the acknowledged ones there.
// On 98f6344 (the group commit default) the local log was synced within a tick of each append,
// long before the WAL object landed, and this passes; with `flush: { kind: 'none' }` given
// explicitly it fails there too: the detection (OwnPartitions.openTopic's durableEnd, the shipped
// ends only, not the tier's end) predates issue 27, which makes it every WAL engine's default.
import { expect, test } from 'bun:test';
import { embeddedPowerLossAfterGc, RECORDS } from '../sim/embedded-power-loss.ts';

// The scenario itself is test/sim/embedded-power-loss.ts, which the simulation's regression of
// this bug (`embedded-tier-end-not-durable`, test/sim/regressions.test.ts) runs too.
test('after a power loss an embedded WAL engine serves every acks=all record, also those tiered and collected from the WAL since the last checkpoint', async () => {
  const after = await embeddedPowerLossAfterGc();
  expect(after.tieredEndBeforeLoss).toBe(RECORDS); // partition 0 is tiered to its end
  expect(after.msBeforeLoss).toBeLessThan(1000); // before the first shipped checkpoint
  expect({ lost: after.lost, logEndOffset: after.logEndOffset }).toEqual({ lost: [], logEndOffset: RECORDS + 1 });
  expect(after.nextOffset).toBe(RECORDS); // not an offset an earlier acknowledgement named
});
