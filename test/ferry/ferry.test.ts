import { afterEach, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ferry, isFerryError } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';

const directories: string[] = [];
const opened: Ferry[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((ferry) => ferry.close()));
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function directory(): string {
  const made = mkdtempSync(join(tmpdir(), 'ferry-face-'));
  directories.push(made);
  return made;
}

async function open(options: Parameters<typeof Ferry.open>[0]): Promise<Ferry> {
  const ferry = await Ferry.open(options);
  opened.push(ferry);
  return ferry;
}

describe('Ferry, the embedded library face', () => {
  test('its public surface is what an embedding service needs, and nothing of the broker', () => {
    const methods = Object.getOwnPropertyNames(Ferry.prototype).filter((name) => name !== 'constructor');
    expect(methods.sort()).toEqual(
      [
        'alterTopicConfig',
        'attachReplica',
        'close',
        'consume',
        'createPartitions',
        'createTopic',
        'deleteTopic',
        'directory',
        'ensureTopic',
        'fetch',
        'offsetFor',
        'produce',
        'topicConfigs',
        'topics',
      ].sort(),
    );
  });

  test('a record produced through the face is consumed back, across a restart', async () => {
    const at = directory();
    const first = await open({ directory: at });
    first.ensureTopic('orders', { partitions: 2 });
    const [produced] = await first.produce('orders', [{ key: 'k', value: 'v1' }], { partition: 1 });
    expect(produced).toEqual({ partition: 1, offset: 0 });
    await first.close();
    const second = await open({ directory: at });
    expect(second.topics().map((topic) => [topic.name, topic.partitions])).toEqual([['orders', 2]]);
    const stop = new AbortController();
    for await (const record of second.consume('orders', { partition: 1, signal: stop.signal })) {
      expect(new TextDecoder().decode(record.value!)).toBe('v1');
      stop.abort();
    }
  });

  test('a read replica attached through the face holds what the leader acknowledged with min.insync.replicas 2', async () => {
    const store = new MemoryStore();
    // min.insync.replicas 2: acks=all answers only once the replica applied the record.
    const leader = await open({ directory: directory(), wal: { store, writerId: 'leader' }, minInsyncReplicas: 2 });
    const replica = await open({ directory: directory(), follow: { store, writerId: 'leader' } });
    leader.attachReplica(replica, 'replica-1');
    leader.ensureTopic('events');
    const [produced] = await leader.produce('events', [{ value: 'seen in zone b' }]);
    const stop = new AbortController();
    let value: string | null = null;
    for await (const record of replica.consume('events', { fromOffset: produced!.offset, signal: stop.signal })) {
      value = new TextDecoder().decode(record.value!);
      stop.abort();
    }
    expect(value).toBe('seen in zone b');
  });

  test('bad input is one FerryError, and nothing was created', async () => {
    const ferry = await open({ directory: directory() });
    const refused = (() => {
      try {
        ferry.createTopic('bad/name');
        return null;
      } catch (error) {
        return error;
      }
    })();
    expect(isFerryError(refused, 'InvalidArgument')).toBe(true);
    expect(ferry.topics()).toEqual([]);
  });
});
