// A fault run's read back: every record of a topic from the start, by a consumer group of its own,
// until `total` records came (the sum of the partitions' high watermarks). A record read twice
// counts twice, so a duplicate shows in the ledger's verdict (test/support/ack-ledger.ts).
import type { Kafka } from 'kafkajs';
import type { AckedRecord } from './ack-ledger.ts';

export async function readTopicBack(kafka: Kafka, topic: string, total: number, groupPrefix: string): Promise<AckedRecord[]> {
  const read: AckedRecord[] = [];
  if (total === 0) return read;
  const consumer = kafka.consumer({ groupId: `${groupPrefix}-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>(
    (done) =>
      void consumer.run({
        partitionsConsumedConcurrently: 8,
        eachMessage: async ({ partition, message }) => {
          read.push({ topic, partition, offset: Number(message.offset), value: message.value!.toString() });
          if (read.length >= total) done();
        },
      }),
  );
  await consumer.disconnect();
  return read;
}
