import { describe, expect, test } from 'bun:test';
import { ReplicaEndRecorder, type ReplicaHost } from '../../src/sim/replica-ends.ts';

/** One broker host whose engine serves t0/0 with a log ending at `end`, or serves nothing (`end` null), or is gone. */
class FakeHost implements ReplicaHost {
  readonly settings = { nodeId: 3 };
  end: number | null = null;
  alive = true;

  get engine(): ReplicaHost['engine'] {
    if (!this.alive) return null;
    return {
      serves: (topic, partition) => this.end !== null && topic === 't0' && partition === 0,
      logEndOffset: () => {
        if (this.end === null) throw new Error('not served');
        return this.end;
      },
    };
  }
}

function recorder(host: FakeHost): { recorder: ReplicaEndRecorder; at: (ms: number) => void } {
  let nowMs = 0;
  return { recorder: new ReplicaEndRecorder([host], [{ name: 't0', partitions: 1 }], () => nowMs), at: (ms) => void (nowMs = ms) };
}

describe('ReplicaEndRecorder', () => {
  test('records each change of a log end once', () => {
    const host = new FakeHost();
    const { recorder: ends, at } = recorder(host);
    host.end = 5;
    ends.sample();
    at(10);
    ends.sample(); // unchanged: nothing new
    host.end = 8;
    at(20);
    ends.sample();
    expect(ends.ends.map(({ atMs, logEndOffset }) => ({ atMs, logEndOffset }))).toEqual([
      { atMs: 0, logEndOffset: 5 },
      { atMs: 20, logEndOffset: 8 },
    ]);
  });

  // seed 3416: broker 3 led at epoch 4 with an undurable tail to 344, released the partition, crashed, and
  // came back following with a log rebuilt from the chain, again to 344 but holding other records. Its
  // return was not recorded, so acks-all-min-insync did not count it for batches sent in between.
  test('a node that serves the partition again at the end it had before is recorded again', () => {
    const host = new FakeHost();
    const { recorder: ends, at } = recorder(host);
    host.end = 344;
    ends.sample();
    at(10);
    host.end = null; // released
    ends.sample();
    at(20);
    host.alive = false; // crashed
    ends.sample();
    at(30);
    host.alive = true;
    host.end = 344; // rebuilt from the chain as a follower
    ends.sample();
    expect(ends.ends.map(({ atMs, logEndOffset }) => ({ atMs, logEndOffset }))).toEqual([
      { atMs: 0, logEndOffset: 344 },
      { atMs: 30, logEndOffset: 344 },
    ]);
  });

  test('a process gone and back at the same end is recorded again', () => {
    const host = new FakeHost();
    const { recorder: ends, at } = recorder(host);
    host.end = 7;
    ends.sample();
    at(10);
    host.alive = false;
    ends.sample();
    at(20);
    host.alive = true;
    ends.sample();
    expect(ends.ends.map(({ atMs }) => atMs)).toEqual([0, 20]);
  });
});
