/**
 * Test-only switches that put back, one at a time, the bugs issue 9 fixed (its findings 1 to 8),
 * in today's code; two that break what issue 12 delivered (DeleteRecords' durable start, a
 * topic's LogAppendTime), two issue 13's security (a PLAIN password check, the ACLs'
 * deny-before-allow rule), one issue 24's judging of ambiguous conditional writes by authorship;
 * and issue 25's, each planted by someone who did not write the invariant meant to catch it, told
 * only the file and the idea: a consumer's read bounded by the high watermark, WAL GC's coverage
 * of a frame the tier end falls inside, the lease's start and end, the idempotent duplicate window
 * and its answer, min.insync.replicas and retention.bytes as altered, the answers to store
 * failures of OffsetCommit and the ACL changes, the group coordinator's generations and offsets,
 * prefixed ACLs and removed SCRAM credentials; two of issue 27's (its review's: an embedded engine's
 * open counting the tier's end durable; and StreamingUpload's sequential finish without its last
 * run, planted when the simulated store got sequential writes); two of issue 28's (a rebuild taking
 * another partition's frames from the shared reads of a takeover; an adoption trusting the local
 * log it finds, which adopted logs rebuilt without barriers make unsafe). The deterministic simulation's self-test (issue 10
 * item 6) turns one on and must then report a violation within its seed budget, which proves it
 * can see that class of bug (test/sim/bugs.test.ts; `unreachable` there says why it cannot).
 *
 * Production code never turns a switch on: nothing outside tests and the simulation calls
 * `reintroduce`. Each bug site reads its switch with `regressed(name)`, which is one boolean test
 * while every switch is off, and reproduces the original mechanism in a line or a few.
 */
export type Regression =
  | 'duplicate-acked-before-durable'
  | 'producer-state-not-rebuilt'
  | 'restart-stream-not-chained'
  | 'reclaim-drops-own-stream'
  | 'stale-durable-map'
  | 'topic-incarnations-mixed'
  | 'follower-reports-to-old-leader'
  | 'isr-keeps-dead-replica'
  | 'release-wakes-waiters'
  | 'fenced-writer-stays-fenced'
  | 'delete-records-not-durable'
  | 'log-append-time-ignored'
  | 'plain-any-password'
  | 'acl-allow-before-deny'
  | 'lone-broker-disk-is-truth'
  | 'judge-by-bytes'
  | 'fetch-past-high-watermark'
  | 'gc-frame-covered-by-first-offset'
  | 'lease-from-answer'
  | 'lapsed-lease-keeps-serving'
  | 'duplicate-window-short'
  | 'duplicate-answer-latest-offset'
  | 'config-min-insync-stale'
  | 'retention-bytes-off-by-segment'
  | 'offset-commit-storage-error'
  | 'acl-change-unknown-server-error'
  | 'commit-stale-generation'
  | 'offset-fetch-stale-cache'
  | 'prefixed-deny-literal'
  | 'scram-removed-user-still-logs-in'
  | 'embedded-tier-end-not-durable'
  | 'sequential-finish-drops-tail'
  | 'idle-upload-not-armed'
  | 'shared-read-unfiltered'
  | 'adoption-keeps-local-log'
  | 'rebuild-passes-own-frames';

export interface RegressionDescription {
  /** The finding of issue 9 whose fix the switch undoes (of `issue`, when set: its deliverable the switch breaks; issue 25's: the planted bug's number, in the order they were planted). */
  readonly finding: number;
  /** Absent: issue 9. Issues 12's, 13's, 24's and 25's switches break what they delivered, to prove their invariants see it; issue 27's undo a fix of its review (finding 1) or break its sequential writes (2); issue 28's breaks its shared takeover reads. */
  readonly issue?: 12 | 13 | 24 | 25 | 27 | 28;
  /** The old behaviour the switch brings back. */
  readonly description: string;
}

export const REGRESSIONS: Readonly<Record<Regression, RegressionDescription>> = {
  'duplicate-acked-before-durable': {
    finding: 1,
    description: "an idempotent retry of a batch the log holds is acknowledged at once at the original's offset, without waiting on the original's durability",
  },
  'producer-state-not-rebuilt': {
    finding: 2,
    description: 'producer state starts empty when a log opens or truncates: neither the snapshot nor the log is replayed, so a retry after a restart is written again',
  },
  'restart-stream-not-chained': {
    finding: 3,
    description: 'adopting a partition whose record already names this broker keeps the record as it is: the new stream is not appended to the chain, the leader epoch does not move',
  },
  'reclaim-drops-own-stream': { finding: 4, description: "the takeover rebuild leaves out this broker's own streams wherever they are in the chain (A0, B0, A1 rebuilds from B0 alone)" },
  'stale-durable-map': { finding: 4, description: "an acknowledgement trusts the WAL writer's per-partition durable offset, never reset for a new adoption: an append below it is durable at once" },
  'topic-incarnations-mixed': { finding: 5, description: 'rebuilds and frame matching ignore the topic id: frames of a deleted incarnation are applied to the new one' },
  'follower-reports-to-old-leader': { finding: 6, description: 'a follower reports its progress to the leader it was first given, whatever later scans say' },
  'isr-keeps-dead-replica': { finding: 6, description: 'the in-sync set keeps a follower that left the replica set (its lease lapsed) until the lag time passes' },
  'release-wakes-waiters': { finding: 7, description: 'releasing a partition or closing the engine wakes every acks=all waiter with success' },
  'fenced-writer-stays-fenced': { finding: 8, description: 'nothing reacts to a fenced or failed WAL writer: the broker keeps its partitions and answers NOT_LEADER forever' },
  'delete-records-not-durable': {
    finding: 2,
    issue: 12,
    description:
      "DeleteRecords' new log start is kept in memory only: the log's checkpoint is not written and a cluster's partition record does not take it, so a restart or a takeover serves below it again",
  },
  'log-append-time-ignored': { finding: 3, issue: 12, description: "a topic's message.timestamp.type=LogAppendTime is not applied: the leader keeps the producer's CreateTime" },
  'plain-any-password': { finding: 1, issue: 13, description: 'SASL/PLAIN takes any password of a user it knows (the comparison with the stored one is skipped)' },
  'acl-allow-before-deny': { finding: 2, issue: 13, description: 'a matching ALLOW ACL decides before a matching DENY one: a user denied an operation it is also allowed keeps it' },
  'lone-broker-disk-is-truth': {
    finding: 1,
    issue: 24,
    description:
      'a lone broker keeps its topics, epochs, producer ids and group offsets in its data directory (no cluster of one), and WAL GC takes an incarnation its registry lacks for deleted: on an empty disk it deletes what it acknowledged and starts its topics over at offset 0',
  },
  'judge-by-bytes': {
    finding: 2,
    issue: 24,
    description:
      "a control record's conditional write whose answer was ambiguous is judged by the record's value, not its nonce [CW1]: a rival's identical record counts as this write landed (two brokers reserve the same producer-id block)",
  },
  'fetch-past-high-watermark': {
    finding: 1,
    issue: 25,
    description:
      "a consumer's fetch from one below the high watermark is not cut at the high watermark (the bound's comparison is off by one): it is answered with the uncommitted records up to the log end",
  },
  'gc-frame-covered-by-first-offset': {
    finding: 2,
    issue: 25,
    description: 'WAL GC judges a frame tiered by its first offset, not its last: a frame the tier end falls inside is deleted although its tail is not tiered',
  },
  'lease-from-answer': {
    finding: 3,
    issue: 25,
    description:
      "a successful renewal's lease is reckoned from when its answer arrived, not from when the write was sent: a slow renewal makes the broker believe it holds its lease longer than the store granted",
  },
  'lapsed-lease-keeps-serving': {
    finding: 4,
    issue: 25,
    description:
      "a broker whose lease ran out unrenewed keeps acknowledging as leader (only a lapse already renewed and awaiting its confirming scan stops it), instead of stopping at the lease's end",
  },
  'duplicate-window-short': {
    finding: 5,
    issue: 25,
    description:
      "a producer's state keeps its last four batches per partition, not five: a retry of the fifth-most-recent batch is not recognised as a duplicate (answered OUT_OF_ORDER_SEQUENCE_NUMBER, or written again)",
  },
  'duplicate-answer-latest-offset': {
    finding: 6,
    issue: 25,
    description: "a retry recognised as a duplicate is answered with the offsets of the producer's most recent batch, not those its own original was written at",
  },
  'config-min-insync-stale': {
    finding: 7,
    issue: 25,
    description:
      'an altered min.insync.replicas is stored but not handed to the partitions a broker leads already: they keep acknowledging acks=all by the value they were adopted with until they are adopted again (a restart)',
  },
  'retention-bytes-off-by-segment': {
    finding: 8,
    issue: 25,
    description:
      'retention by size compares the log before taking the oldest segment off: a log over retention.bytes loses its oldest segment even when that leaves it under the limit, so records within retention.bytes are deleted',
  },
  'offset-commit-storage-error': {
    finding: 9,
    issue: 25,
    description:
      "an OffsetCommit whose write to the store failed is answered KAFKA_STORAGE_ERROR, a partition's code, not a retriable coordinator error: a Java consumer takes the commit for failed for good and does not retry it",
  },
  'acl-change-unknown-server-error': {
    finding: 10,
    issue: 25,
    description:
      'a CreateAcls or DeleteAcls whose store write failed is answered UNKNOWN_SERVER_ERROR, not REQUEST_TIMED_OUT: the client is told nothing about whether the change, which may have landed, took effect',
  },
  'commit-stale-generation': {
    finding: 11,
    issue: 25,
    description:
      "OffsetCommit's generation check is off by one: a commit under the generation just before the group's current one is accepted as current, so a member of an ended generation overwrites the offsets of the partitions' new owners",
  },
  'offset-fetch-stale-cache': {
    finding: 12,
    issue: 25,
    description:
      "a coordinator keeps the copy of a group's offsets it loaded while it held the group: when the group comes back to it (a move, a reload), OffsetFetch answers from that old copy instead of the latest commits",
  },
  'prefixed-deny-literal': {
    finding: 13,
    issue: 25,
    description: 'a PREFIXED DENY ACL is matched only by a resource named exactly its prefix, as if it were LITERAL: a user denied by a prefix keeps access to the resources under it',
  },
  'scram-removed-user-still-logs-in': {
    finding: 14,
    issue: 25,
    description:
      "a refresh of the SCRAM credentials takes up a user's new and changed credentials but keeps those the user's record no longer holds: a user whose credential was deleted on another broker still logs in there with the old password",
  },
  'embedded-tier-end-not-durable': {
    finding: 1,
    issue: 27,
    description:
      "an embedded engine's open counts durable only what its WAL streams hold (the shipped checkpoint and the objects after it), not the tier record's end: records acknowledged after the last checkpoint, tiered and collected by WAL GC, then lost from the unsynced local log in a power loss, are not rebuilt, and their offsets go to new records",
  },
  'sequential-finish-drops-tail': {
    finding: 2,
    issue: 27,
    description:
      "StreamingUpload's finish on a store with sequential writes publishes without appending the chunks still pending: the object lacks its last run (the whole of one smaller than SEQUENTIAL_APPEND_BYTES, every object of a simulated run) and the upload answers success, so a streamed WAL object is acknowledged on bytes it does not hold",
  },
  'idle-upload-not-armed': {
    finding: 3,
    issue: 27,
    description:
      'the WAL writer arms its idle close only when an upload lands, not when an object opens: frames handed to an idle writer wait out the upload interval before their PUT, so an acknowledgement that should be one PUT away is the interval plus one PUT ([W8])',
  },
  'shared-read-unfiltered': {
    finding: 1,
    issue: 28,
    description:
      "a rebuild's view of the shared whole-object reads [K7] hands it every frame of the object, not only its partition's: frames of the other partitions the takeover adopts are applied to its log",
  },
  'adoption-keeps-local-log': {
    finding: 2,
    issue: 28,
    description:
      'an adoption that is not a promotion keeps the local log it finds in the directory (its rebuild written without barriers, [C5]) instead of starting empty: a restarted leader serves what its old process appended and never shipped, and skips the chain frames another leader wrote at those offsets',
  },
  'rebuild-passes-own-frames': {
    finding: 3,
    issue: 28,
    description:
      "a rebuild passes over every object already read whole for the takeover [K7], not only those whose index holds none of its partition's frames: its own frames in them are never applied",
  },
};

const active = new Set<Regression>();

/** Whether the old bug `name` is switched back on (false unless a test or the simulation turned it on). */
export function regressed(name: Regression): boolean {
  return active.size > 0 && active.has(name);
}

/** Switches the old bugs `names` back on, in addition to any already on (tests and the simulation only). */
export function reintroduce(names: readonly Regression[]): void {
  for (const name of names) {
    if (!Object.hasOwn(REGRESSIONS, name)) throw new Error(`no regression switch named ${name}`);
    active.add(name);
  }
}

/** Switches every old bug off again. */
export function resetRegressions(): void {
  active.clear();
}

/** The switches on now (for a simulation's report). */
export function activeRegressions(): readonly Regression[] {
  return [...active];
}
