// docs/tier-protocol.md [K5]: a produce that reaches a new leader while it is still taking the
// partition over (claimed, rebuilding the tail) is answered once the takeover ends, rather than
// with NOT_LEADER_OR_FOLLOWER that sends the client off to back off for its retry interval. A
// takeover that ends without serving, or outlasts the wait's bound, sends the client to its
// metadata again; the request's own timeout bounds the wait too. Nothing is appended before the
// partition is served.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../src/broker/context.ts';
import { ADOPTION_WAIT_MAX_MS, handleProduce } from '../../src/broker/handlers/produce.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { settle } from '../support/settle.ts';
import { OPEN_SECURITY } from '../support/broker-security.ts';

const TOPIC = 'orders';
const records = buildRecordBatch([{ value: 'v', timestamp: 1_700_000_000_000 }], { nowMs: 1_700_000_000_000 });

/** A broker taking partition 0 of TOPIC over: `finish(serving)` ends the takeover. */
function takingOver() {
  const clock = new ManualClock();
  const state = { serving: false, adoption: null as Promise<void> | null, appended: 0 };
  let finish: (serving: boolean) => void = () => {};
  state.adoption = new Promise<void>((resolve) => {
    finish = (serving) => {
      state.serving = serving;
      state.adoption = null;
      resolve();
    };
  });
  const context = {
    ...OPEN_SECURITY,
    clock,
    engine: {
      serves: () => state.serving,
      appendBatches: async () => {
        if (!state.serving) throw new Error('appended to a partition not served');
        state.appended++;
        return { baseOffset: 7, lastOffset: 7, logStartOffset: 0, committed: Promise.resolve() };
      },
    },
    topology: { topics: () => new Map([[TOPIC, 1]]), adoptionOf: () => state.adoption },
  } as unknown as BrokerContext;
  const produce = (timeoutMs = 30_000) =>
    handleProduce(context, { transactionalId: null, acks: -1, timeoutMs, topicData: [{ name: TOPIC, partitionData: [{ index: 0, records }] }] }).then(
      (response) => response!.responses[0]!.partitionResponses[0]!,
    );
  return { clock, state, produce, finish: (serving: boolean) => finish(serving) };
}

test('a produce during the takeover waits for it and is acknowledged once the partition is served', async () => {
  const broker = takingOver();
  let answered = false;
  const answer = broker.produce().then((response) => ((answered = true), response));
  await settle();
  expect([answered, broker.state.appended]).toEqual([false, 0]);
  broker.finish(true);
  expect(await answer).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 7 });
  expect(broker.state.appended).toBe(1);
});

test('a takeover that ends without serving answers NOT_LEADER_OR_FOLLOWER, appending nothing', async () => {
  const broker = takingOver();
  const answer = broker.produce();
  await settle();
  broker.finish(false);
  expect((await answer).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  expect(broker.state.appended).toBe(0);
});

test('a takeover that outlasts the wait answers NOT_LEADER_OR_FOLLOWER; one that outlasts the request answers its timeout', async () => {
  const slow = takingOver();
  const answer = slow.produce();
  await settle();
  slow.clock.advance(ADOPTION_WAIT_MAX_MS);
  expect((await answer).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  const timed = slow.produce(1_000);
  await settle();
  slow.clock.advance(1_000);
  expect((await timed).errorCode).toBe(ErrorCode.REQUEST_TIMED_OUT);
  expect(slow.state.appended).toBe(0);
});
