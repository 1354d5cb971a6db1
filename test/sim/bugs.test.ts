import { expect, test } from 'bun:test';
import { huntBug } from '../../src/sim/bug-hunt.ts';
import { REGRESSIONS, type Regression } from '../../src/util/regressions.ts';

/**
 * The simulation's self-test (issue 10 item 6): with each of issue 9's bugs turned back on, the
 * seed that `npm run sim:bugs` found first still reports a violation that the same seed without
 * the bug does not. A change to the code changes the runs: when an entry here stops catching its
 * bug, run `npm run sim:bugs -- --bug <name>` again and put the new seed here (the count it took
 * goes in src/sim/runs.md). `unreachable`: the simulation does not catch it (the reason says why).
 */
const CAUGHT_BY: Readonly<Record<Regression, number | { readonly unreachable: string }>> = {
  'duplicate-acked-before-durable': 8,
  'producer-state-not-rebuilt': 45,
  'restart-stream-not-chained': 2,
  'reclaim-drops-own-stream': 13,
  'stale-durable-map': {
    unreachable:
      "every takeover seals the previous leader's stream, and a sealed writer starts a new epoch with a fresh durable map: no writer keeps serving a partition whose log went back below what it made durable (finding 4 is caught through reclaim-drops-own-stream)",
  },
  'topic-incarnations-mixed': 83,
  'follower-reports-to-old-leader': 48,
  'isr-keeps-dead-replica': 9,
  'release-wakes-waiters': 75,
  'fenced-writer-stays-fenced': 249,
  'delete-records-not-durable': 5,
  'log-append-time-ignored': 6,
  'plain-any-password': 22,
  'acl-allow-before-deny': 9,
  'judge-by-bytes': 6,
  'lone-broker-disk-is-truth': 1,
  'fetch-past-high-watermark': 334,
  'gc-frame-covered-by-first-offset': {
    unreachable:
      "every WAL frame the simulation writes holds one batch (Produce refuses a second batch of a partition; only a stand-alone engine re-ships a local suffix as frames of several batches, and every simulated broker with a WAL runs as a cluster, of one when alone; the embedded runs' engine re-ships after a power loss only what a segment roll synced before the WAL took it, with at most four produce calls in flight: 0 frames of several batches in the 81 embedded runs of seeds 501..1000), and a tier end is a batch boundary: no frame straddles it, so a frame's first and last offsets agree on whether it lies below it (the run's stats: 0 frames of several batches)",
  },
  'lease-from-answer': 2,
  'lapsed-lease-keeps-serving': 3,
  'duplicate-window-short': 8,
  'duplicate-answer-latest-offset': 7,
  'config-min-insync-stale': 46,
  'retention-bytes-off-by-segment': 4,
  'offset-commit-storage-error': 8,
  'acl-change-unknown-server-error': 3,
  'commit-stale-generation': 3,
  'offset-fetch-stale-cache': 26,
  'prefixed-deny-literal': 9,
  'scram-removed-user-still-logs-in': 41,
  'embedded-tier-end-not-durable': 35,
  'sequential-finish-drops-tail': 6,
  'idle-upload-not-armed': 1,
  'shared-read-unfiltered': 5,
  'adoption-keeps-local-log': 5,
  'rebuild-passes-own-frames': 3,
};

for (const bug of Object.keys(REGRESSIONS) as Regression[]) {
  const entry = CAUGHT_BY[bug];
  if (typeof entry === 'number') {
    test(`the simulation catches ${bug} (${REGRESSIONS[bug].issue === undefined ? '' : `issue ${REGRESSIONS[bug].issue} `}finding ${REGRESSIONS[bug].finding}) at seed ${entry}`, async () => {
      const hunt = await huntBug(bug, entry, 1);
      expect(hunt.caughtBy?.seed ?? null).toBe(entry);
    }, 60_000);
  } else {
    test.todo(`the simulation catches ${bug} (finding ${REGRESSIONS[bug].finding}): ${entry.unreachable}`);
  }
}
