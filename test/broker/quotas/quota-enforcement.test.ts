// The quota wrapper over the binding table, with stand-in handlers and a ManualClock: what each API
// records, the throttle it answers and mutes for, and what no quota judges.
import { describe, expect, test } from 'bun:test';
import { apiVersionsCodec } from '../../../src/broker/apis/api-versions.ts';
import { type FetchRequest, type FetchResponse, fetchCodec } from '../../../src/broker/apis/fetch.ts';
import { metadataCodec } from '../../../src/broker/apis/metadata.ts';
import { type ProduceRequest, produceCodec } from '../../../src/broker/apis/produce.ts';
import { saslHandshakeCodec } from '../../../src/broker/apis/sasl-handshake.ts';
import { completeMessage, type Draft } from '../../../src/protocol/message-codec.ts';
import { produceRequestSchema } from '../../../src/protocol/messages/produce.ts';
import { enforceClientQuotas } from '../../../src/broker/quota-enforcement.ts';
import type { ApiBinding, RequestContext } from '../../../src/broker/router.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MetricsRegistry } from '../../../src/metrics/index.ts';
import { userPrincipal } from '../../../src/security/principal.ts';
import { ClientQuotaStore } from '../../../src/security/quotas/store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { fetchRequest } from '../../support/requests.ts';

// biome-ignore lint: stand-in bindings of any API
type AnyBinding = ApiBinding<any, any>;

async function setup(quotas: Record<string, number>, entity: { entityType: string; entityName: string | null }[] = [{ entityType: 'user', entityName: 'alice' }]) {
  const store = new ClientQuotaStore(new ControlStore(new MemoryStore(), ''));
  const ops = Object.entries(quotas).map(([key, value]) => ({ key, value, remove: false }));
  expect((await store.alter([{ entity, ops }], false))[0]!.errorCode).toBe(0);
  const clock = new ManualClock();
  const metrics = new MetricsRegistry();
  return { store, clock, metrics };
}

function context(mutes: number[], clientId: string | null = 'app', user = 'alice'): RequestContext {
  return {
    peer: '127.0.0.1',
    session: { principal: userPrincipal(user), clientAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', saslMechanism: null },
    sasl: { handshake: () => Promise.reject(new Error('unused')), authenticate: () => Promise.reject(new Error('unused')) },
    mute: (ms) => void mutes.push(ms),
    header: { apiKey: 0, apiVersion: 0, correlationId: 1, clientId },
  };
}

function wrapped(binding: AnyBinding, setupResult: Awaited<ReturnType<typeof setup>>): AnyBinding {
  const table = enforceClientQuotas([binding], { quotas: setupResult.store, clock: setupResult.clock, metrics: setupResult.metrics });
  return table[0]!;
}

function produce(bytes: number, acks = -1): ProduceRequest {
  const draft: Draft<ProduceRequest> = { acks, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: new Uint8Array(bytes) }] }] };
  return completeMessage<ProduceRequest>(produceRequestSchema, draft);
}

function fetchAnswer(bytes: number): FetchResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    sessionId: 0,
    responses: [
      {
        topic: 't',
        topicId: '',
        partitions: [
          { partitionIndex: 0, errorCode: 0, highWatermark: 1, lastStableOffset: 1, logStartOffset: 0, abortedTransactions: null, preferredReadReplica: -1, records: [new Uint8Array(bytes)] },
        ],
      },
    ],
  } as unknown as FetchResponse;
}

describe('produce (producer_byte_rate)', () => {
  test("the batches' bytes are recorded; past the quota the answer carries the throttle and the connection is muted for it", async () => {
    const s = await setup({ producer_byte_rate: 1000 });
    const binding = wrapped({ codec: produceCodec, handle: () => ({ responses: [], throttleTimeMs: 0 }) }, s);
    const mutes: number[] = [];
    expect(await binding.handle(produce(10_000), context(mutes))).toEqual({ responses: [], throttleTimeMs: 0 });
    // 20000 bytes in a fresh rate: 2000/s against 1000 over 10 s windows.
    expect(await binding.handle(produce(10_000), context(mutes))).toEqual({ responses: [], throttleTimeMs: 10_000 });
    expect(mutes).toEqual([10_000]);
    expect(s.metrics.renderPrometheus()).toContain('ferry_broker_throttled_requests_total{quota="produce"} 1');
  });

  test('acks=0 has no answer, but its connection is muted all the same; the request quota does not judge it', async () => {
    const s = await setup({ producer_byte_rate: 1000, request_percentage: 1 });
    const binding = wrapped(
      {
        codec: produceCodec,
        handle: () => {
          s.clock.advance(100); // 100 ms of thread time: 10 percent-seconds, far past 1%
          return null;
        },
      },
      s,
    );
    const mutes: number[] = [];
    expect(await binding.handle(produce(15_000, 0), context(mutes))).toBeNull();
    expect(mutes).toEqual([5_000]);
  });

  test('another user, under no quota, is not recorded at all', async () => {
    const s = await setup({ producer_byte_rate: 1 });
    const binding = wrapped({ codec: produceCodec, handle: () => ({ responses: [], throttleTimeMs: 0 }) }, s);
    const mutes: number[] = [];
    expect(await binding.handle(produce(1_000_000), context(mutes, 'app', 'bob'))).toEqual({ responses: [], throttleTimeMs: 0 });
    expect(mutes).toEqual([]);
  });
});

describe('request_percentage', () => {
  test("the handler's thread time before its first wait, in percent of one thread; the throttle is capped at one window", async () => {
    const s = await setup({ request_percentage: 10 });
    let busyMs = 0;
    let waitMs = 0;
    const binding = wrapped(
      {
        codec: metadataCodec,
        handle: async () => {
          s.clock.advance(busyMs); // thread time
          await Promise.resolve();
          s.clock.advance(waitMs); // after a wait: not thread time
          return { throttleTimeMs: 0, brokers: [] };
        },
      },
      s,
    );
    const call = async () => ((await binding.handle({}, context(mutes))) as { throttleTimeMs: number }).throttleTimeMs;
    const mutes: number[] = [];
    [busyMs, waitMs] = [0, 10_000]; // counted, 10 s would be 1000 percent-seconds
    expect(await call()).toBe(0);
    [busyMs, waitMs] = [500, 0]; // 50 percent-seconds over 10.5 s
    expect(await call()).toBe(0);
    // 100 more: 150 over 10.5 s is 14.3%, past 10%: (14.3 - 10) / 10 × 10500 = 4500 ms, capped at the 1000 ms window.
    [busyMs, waitMs] = [1_000, 0];
    expect(await call()).toBe(1_000);
    expect(mutes).toEqual([1_000]);
    expect(s.metrics.renderPrometheus()).toContain('ferry_broker_throttled_requests_total{quota="request"} 1');
  });

  test("an answer keeps a larger throttle of its handler's own", async () => {
    const s = await setup({ request_percentage: 1 });
    const binding = wrapped(
      {
        codec: apiVersionsCodec,
        handle: () => {
          s.clock.advance(200); // 20 percent-seconds over 10 s: 2%, past 1%
          return { errorCode: 0, apiKeys: [], throttleTimeMs: 5_000 };
        },
      },
      s,
    );
    const mutes: number[] = [];
    expect(((await binding.handle({}, context(mutes))) as { throttleTimeMs: number }).throttleTimeMs).toBe(5_000);
    expect(mutes).toEqual([1_000]);
  });

  test('authentication is judged by no quota', async () => {
    const s = await setup({ request_percentage: 0.001 });
    const binding = wrapped(
      {
        codec: saslHandshakeCodec,
        handle: () => {
          s.clock.advance(1_000);
          return { errorCode: 0, mechanisms: [] };
        },
      },
      s,
    );
    const mutes: number[] = [];
    await binding.handle({}, context(mutes));
    await binding.handle({}, context(mutes));
    expect(mutes).toEqual([]);
  });
});

describe('fetch (consumer_byte_rate)', () => {
  test('a consumer asks for at most quota × 10 windows; a throttled fetch answers no records, and what it read is taken back', async () => {
    const s = await setup({ consumer_byte_rate: 1000 });
    const asked: FetchRequest[] = [];
    let answerBytes = 0;
    const binding = wrapped(
      {
        codec: fetchCodec,
        handle: (request: FetchRequest) => {
          asked.push(request);
          return fetchAnswer(answerBytes);
        },
      },
      s,
    );
    const mutes: number[] = [];
    const request = fetchRequest({ replicaId: -1, maxBytes: 50 * 1024 * 1024, minBytes: 1_000_000, topics: [] });
    answerBytes = 9_000;
    expect(((await binding.handle(request, context(mutes))) as FetchResponse).responses).toHaveLength(1);
    expect([asked[0]!.maxBytes, asked[0]!.minBytes]).toEqual([10_000, 10_000]);
    answerBytes = 6_000; // 15000 over 10 s: 1500/s
    const throttled = (await binding.handle(request, context(mutes))) as FetchResponse;
    expect(throttled.responses).toEqual([]);
    expect(throttled.throttleTimeMs).toBe(5_000);
    expect(mutes).toEqual([5_000]);
    // The 6000 bytes were taken back: 9000 + 1000 is the quota exactly.
    answerBytes = 1_000;
    expect(((await binding.handle(request, context(mutes))) as FetchResponse).throttleTimeMs).toBe(0);
    expect(s.metrics.renderPrometheus()).toContain('ferry_broker_throttled_requests_total{quota="fetch"} 1');
  });

  test("a follower's Fetch is judged by no quota (replica_id, or replica_state from v15)", async () => {
    const s = await setup({ consumer_byte_rate: 1, request_percentage: 0.001 }, [{ entityType: 'user', entityName: null }]);
    const asked: FetchRequest[] = [];
    const binding = wrapped(
      {
        codec: fetchCodec,
        handle: (request: FetchRequest) => {
          asked.push(request);
          s.clock.advance(100);
          return fetchAnswer(1_000_000);
        },
      },
      s,
    );
    const mutes: number[] = [];
    const follower = fetchRequest({ replicaId: 2, maxBytes: 1 << 20, topics: [] });
    const answer = (await binding.handle(follower, context(mutes, null, 'broker-2'))) as FetchResponse;
    expect([answer.throttleTimeMs, answer.responses.length, asked[0]!.maxBytes]).toEqual([0, 1, 1 << 20]);
    const v15 = { ...follower, replicaId: -1, replicaState: { replicaId: 2, replicaEpoch: 1 } } as FetchRequest;
    expect(((await binding.handle(v15, context(mutes, null, 'broker-2'))) as FetchResponse).throttleTimeMs).toBe(0);
    expect(mutes).toEqual([]);
  });
});
