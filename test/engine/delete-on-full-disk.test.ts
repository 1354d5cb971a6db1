// A topic delete whose registry write fails (a full disk) must leave the topic as it was: still
// registered and still served. It used to drop the partitions first and write the registry after,
// so the failed delete left a topic that existed (a create answered TopicAlreadyExists) yet was
// served nowhere (every produce and fetch answered NOT_LEADER_OR_FOLLOWER until a restart). Found
// by the simulation (seed 1461: a single broker whose delete answered KAFKA_STORAGE_ERROR).
// A managed engine (a cluster broker) is told to forget a topic the cluster deleted already: it
// lets go of the partitions whatever its disk says (seed 1769: the old incarnation stayed served).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { TOPICS_FILE } from '../../src/engine/topic-registry.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

/** The system disk, except that opening the registry's temporary file fails ENOSPC while `full`. */
function registryFullDisk(): { disk: Disk; full: { on: boolean } } {
  const full = { on: false };
  const disk: Disk = {
    ...systemDisk,
    openSync(path, flags) {
      if (full.on && path.endsWith(`${TOPICS_FILE}.tmp`)) throw Object.assign(new Error('ENOSPC: no space left on device, open'), { code: 'ENOSPC' });
      return systemDisk.openSync(path, flags);
    },
  };
  return { disk, full };
}

test('a delete that cannot write the registry fails and leaves the topic registered and served', async () => {
  const { disk, full } = registryFullDisk();
  const ferry = await Engine.open({ directory: tempDir(), disk, random: new SeededRandom(1), log: { flush: { kind: 'none' } } });
  try {
    ferry.createTopic('t', { partitions: 1 });
    await ferry.produce('t', [{ value: 'a' }], { partition: 0 });
    full.on = true;
    await expect(ferry.deleteTopic('t')).rejects.toThrow('ENOSPC');
    full.on = false;
    expect(ferry.serves('t', 0)).toBe(true);
    expect(ferry.leads('t', 0)).toBe(true);
    await ferry.produce('t', [{ value: 'b' }], { partition: 0 });
    const values = ferry.fetch('t', 0, 0).batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
    expect(values).toEqual(['a', 'b']);
    await ferry.deleteTopic('t'); // and once the disk has room, the delete goes through
    expect(ferry.serves('t', 0)).toBe(false);
  } finally {
    await ferry.close();
  }
});

test('a managed engine told to delete a topic lets go of its partitions even when the registry cannot be written', async () => {
  const { disk, full } = registryFullDisk();
  const ferry = await Engine.open({
    directory: tempDir(),
    disk,
    clock: new ManualClock(),
    cluster: managedBy(),
    log: { flush: { kind: 'none' } },
    wal: { store: new MemoryStore(), writerId: 'b1', config: { uploadIntervalMs: 1 } },
  });
  try {
    await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {});
    expect(ferry.leads('t', 0)).toBe(true);
    full.on = true;
    await expect(ferry.deleteTopic('t')).rejects.toThrow('ENOSPC');
    expect(ferry.serves('t', 0)).toBe(false); // nothing of the deleted incarnation is served or acknowledged
    full.on = false;
    await ferry.adoptPartition('t', idOf('t', 1), 0, 1, async () => {}); // the next incarnation replaces the registry entry
    expect(ferry.leads('t', 0)).toBe(true);
    expect(ferry.fetch('t', 0, 0).batches).toEqual([]);
  } finally {
    await ferry.close();
  }
});
