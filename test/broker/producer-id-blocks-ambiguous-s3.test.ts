// Issue 24, finding 2 [CW1]: two brokers reserving a producer-id block at once, on the real S3
// backend (s3rver behind the conditional proxy). Both read the same record and write the same
// next value; the loser's PUT meets a 500 InternalError that never reached the store (an answer
// the SDK cannot prove unsent). Its read-back finds the winner's record: the same value, another
// writer's nonce. It must count as a lost race (the loser reserves the next block), never as its
// own write landed (both brokers would hand out the same ids: two producers sharing one id and
// epoch share a sequence space, and one's batches are answered as the other's duplicates).
import { describe, expect, setDefaultTimeout, test } from 'bun:test';
import { ControlProducerIdBlocks } from '../../src/broker/producers.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { S3Store } from '../../src/store/s3.ts';
import { useS3Endpoints } from '../support/s3-endpoints.ts';
import { S3RVER_ACCESS_KEY_ID, S3RVER_REGION, S3RVER_SECRET_ACCESS_KEY } from '../support/s3rver.ts';

setDefaultTimeout(30_000);

const endpoints = useS3Endpoints();
const ENV = { AWS_ACCESS_KEY_ID: S3RVER_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: S3RVER_SECRET_ACCESS_KEY };
/** The producer-id record's key in the bucket, as the proxy sees the path. */
const PRODUCER_IDS_PATH = /\/control\/producer-ids$/;
let bucketCount = 0;

/** Two S3 stores (two brokers) on one fresh bucket behind the conditional proxy, through the SDK (conditional PUTs always are). */
async function twoBrokersStores(): Promise<[S3Store, S3Store]> {
  const bucket = `ferry-ambiguous-${++bucketCount}`;
  await endpoints.s3rver().createBucket(bucket);
  const url = new URL(`s3://${bucket}/cluster?region=${S3RVER_REGION}&forcePathStyle=true&endpoint=${endpoints.proxy().endpoint}&bunS3=false`);
  return [S3Store.fromUrl(url, ENV), S3Store.fromUrl(url, ENV)];
}

/** `store` whose first put waits for `beforeFirstPut` (the other broker's whole reservation): the race is made, not hoped for. */
function firstPutHeld(store: ObjectStore, beforeFirstPut: () => Promise<void>): ObjectStore {
  let held = false;
  return new Proxy(store, {
    get(target, property) {
      if (property === 'put' && !held) {
        return async (...args: Parameters<ObjectStore['put']>) => {
          held = true;
          await beforeFirstPut();
          return target.put(...args);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Broker B reads the record, then broker A reserves a whole block, then B's conditional PUT
 * (create or replace, as the record was when B read it) is answered 500 without reaching s3rver.
 */
async function raceWithLostAnswer(existing: boolean): Promise<{ a: { start: number; end: number }; b: { start: number; end: number } }> {
  const [storeA, storeB] = await twoBrokersStores();
  try {
    const a = new ControlProducerIdBlocks(new ControlStore(storeA, ''));
    if (existing) await a.reserve(); // the record exists: both then replace it (If-Match)
    const bRead = Promise.withResolvers<void>();
    const aReserved = Promise.withResolvers<{ start: number; end: number }>();
    const b = new ControlProducerIdBlocks(
      new ControlStore(
        firstPutHeld(storeB, async () => {
          bRead.resolve();
          await aReserved.promise;
          endpoints.proxy().inject({ method: 'PUT', path: PRODUCER_IDS_PATH, count: 1, action: { kind: 'InternalError' } });
        }),
        '',
      ),
    );
    const bReservation = b.reserve();
    await bRead.promise;
    aReserved.resolve(await a.reserve());
    return { a: await aReserved.promise, b: await bReservation };
  } finally {
    endpoints.proxy().clearFaults();
    await storeA.close();
    await storeB.close();
  }
}

function overlap(x: { start: number; end: number }, y: { start: number; end: number }): boolean {
  return x.start < y.end && y.start < x.end;
}

describe('[CW1] producer-id blocks reserved at once on S3, the loser answered 500 InternalError', () => {
  test('replace (If-Match): the loser reads back the same next value under another nonce and reserves the next block', async () => {
    const { a, b } = await raceWithLostAnswer(true);
    expect(overlap(a, b)).toBe(false);
    expect(b.start).toBe(a.end);
  });

  test('create (If-None-Match: *): the loser reads back the same first record under another nonce and reserves the next block', async () => {
    const { a, b } = await raceWithLostAnswer(false);
    expect(a).toEqual({ start: 0, end: 1000 });
    expect(overlap(a, b)).toBe(false);
    expect(b.start).toBe(a.end);
  });
});
