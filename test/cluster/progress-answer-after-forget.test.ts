// Review finding ([R2], [L4], issue 9 finding 12): a progress report's answer that arrives after
// the follower stopped reporting the partition (its topic was deleted; forget) still passed its
// high watermark on. The partition's next follow under the same name (the new incarnation, same
// leader) took it as the leader's high watermark, which a follower only ever raises: it served
// the new incarnation's records up to the old incarnation's high watermark, uncommitted ones too.
import { expect, test } from 'bun:test';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { fetchAnswer, listenFakeFetchLeader, type ReceivedFetch } from '../support/fake-fetch-leader.ts';
import { until } from '../support/until.ts';

/** The old incarnation's committed end, and the new one's (nothing committed yet). */
const OLD_HIGH_WATERMARK = 500;
const NEW_HIGH_WATERMARK = 0;

test('an answer to a report of a partition no longer reported is not taken as its leader high watermark', async () => {
  const requests: ReceivedFetch[] = [];
  let held: Uint8Array | null = null;
  const server = listenFakeFetchLeader((fetch) => {
    requests.push(fetch);
    // The old incarnation's answer is slow; it arrives with the new incarnation's, first.
    if (requests.length === 1) held = fetchAnswer(fetch, () => ({ highWatermark: OLD_HIGH_WATERMARK }));
    else fetch.socket.write(Buffer.concat([...(held === null ? [] : [held]), fetchAnswer(fetch, () => ({ highWatermark: NEW_HIGH_WATERMARK }))]));
    if (requests.length > 1) held = null;
  });
  const heard: number[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock: new ManualClock(), highWatermark: (_topic, _partition, highWatermark) => heard.push(highWatermark) });
  try {
    reporter.report('t', 0, OLD_HIGH_WATERMARK, 4); // the old incarnation, in its leader epoch
    await until(() => requests.length === 1, "the old incarnation's report");
    reporter.forget('t', 0); // the topic was deleted
    reporter.report('t', 0, 3, 5); // created again, the same leader: three records applied, none committed
    await until(() => heard.length > 0 && heard.at(-1) === NEW_HIGH_WATERMARK, "the new incarnation's answer");
    expect(heard).not.toContain(OLD_HIGH_WATERMARK);
  } finally {
    reporter.close();
    server.stop();
  }
});
