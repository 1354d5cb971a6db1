// A follower's progress reports (Kafka's replica Fetch) against a fake leader on loopback: the
// answers' high watermark reaches the follower, and a report is repeated until the answer covers it.
import { expect, test } from 'bun:test';
import type { FetchRequest } from '../../src/broker/apis/fetch.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { systemClock } from '../../src/util/clock.ts';
import { fetchAnswer, listenFakeFetchLeader } from '../support/fake-fetch-leader.ts';

test('the leader high watermark in the answers reaches the follower; a report repeats until an answer covers it', async () => {
  const requests: FetchRequest[] = [];
  let committed = 0; // the fake leader commits offset 7 only after the third report
  const server = listenFakeFetchLeader((fetch) => {
    requests.push(fetch.request);
    if (requests.length >= 3) committed = 7;
    fetch.socket.write(fetchAnswer(fetch, () => ({ highWatermark: committed })));
  });
  const heard: number[] = [];
  const reporter = new ProgressReporter(2, '127.0.0.1', server.port, { clock: systemClock, highWatermark: (_topic, _partition, hw) => heard.push(hw) });
  reporter.report('t', 0, 7, 3);
  const deadline = performance.now() + 10_000;
  while (!heard.includes(7) && performance.now() < deadline) await Bun.sleep(10);
  const reportsWhenCovered = requests.length;
  await Bun.sleep(200); // four repeat intervals: no more reports once an answer covered it
  reporter.close();
  server.stop();
  expect(heard.at(-1)).toBe(7);
  expect(heard.slice(0, 2)).toEqual([0, 0]);
  expect(requests[0]!.replicaId).toBe(2);
  expect(requests.every((r) => r.topics[0]!.partitions[0]!.fetchOffset === 7 && r.maxBytes === 0)).toBe(true);
  // Issue 9 finding 5: every report, repeats included, names the leader epoch followed (the leader counts it only in that epoch).
  expect(requests.every((r) => r.topics[0]!.partitions[0]!.currentLeaderEpoch === 3)).toBe(true);
  expect(requests.length).toBe(reportsWhenCovered);
});
