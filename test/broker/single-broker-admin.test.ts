// The single broker's topology answers CreatePartitions and DeleteRecords from its engine: what a
// handler calls is the same in both modes (the cluster's: test/cluster/create-partitions.test.ts,
// test/cluster/delete-records-takeover.test.ts).
import { expect, test } from 'bun:test';
import { SingleBrokerTopology } from '../../src/broker/topology.ts';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { tempDir } from '../support/temp-dir.ts';

const SELF = { nodeId: 1, host: '127.0.0.1', port: 9092, rack: null };

test("CreatePartitions grows the topic Metadata lists, with Kafka's errors; DeleteRecords answers the low watermark", async () => {
  const engine = await Engine.open({ directory: tempDir() });
  const topology = new SingleBrokerTopology(SELF, engine);
  await topology.createTopic('t', 1);
  await topology.createPartitions('t', 3, true);
  expect(topology.topics().get('t')).toBe(1);
  await topology.createPartitions('t', 3, false);
  expect(topology.topics().get('t')).toBe(3);
  expect(topology.leaderOf('t', 2)).toBe(1);
  const refused = await topology.createPartitions('t', 2, false).catch((error: unknown) => error);
  expect(isFerryError(refused, 'InvalidPartitions')).toBe(true);
  for (let i = 0; i < 4; i++) await engine.produce('t', [{ value: `v${i}` }], { partition: 2 });
  expect(await topology.deleteRecords('t', 2, -1)).toBe(4);
  const outOfRange = await topology.deleteRecords('t', 2, 5).catch((error: unknown) => error);
  expect(isFerryError(outOfRange, 'OffsetOutOfRange')).toBe(true);
  await engine.close();
});
