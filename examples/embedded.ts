import { Ferry } from 'ferry';
import { FileStore } from 'ferry/store';

const store = await FileStore.open('./objects'); // or S3: openStore('s3://bucket/prefix?region=...')
const ferry = await Ferry.open({ directory: './data', wal: { store, writerId: 'node-1' } });
ferry.ensureTopic('orders', { partitions: 3 }); // created on the first run, reused after
const produced = await ferry.produce('orders', [{ key: 'order-1', value: '{"total": 42}' }]);
const { partition, offset } = produced[0]!; // one offset per record sent
for await (const record of ferry.consume('orders', { partition, fromOffset: offset })) {
  console.log(record.offset, new TextDecoder().decode(record.value!));
  break;
}
await ferry.close();
await store.close();
