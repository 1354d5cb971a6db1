import { expect, test } from 'bun:test';
import { logSlowRequests, SLOW_REQUEST_MS } from '../../src/broker/slow-requests.ts';
import type { ApiBinding, RequestContext } from '../../src/broker/router.ts';
import { type LogRecord, RecordLogger } from '../../src/observability/record-logger.ts';
import { ManualClock } from '../../src/util/clock.ts';

/** A binding of API `name` whose handling takes `takesMs` on `clock`. */
function binding(name: string, clock: ManualClock, takesMs: number): ApiBinding<Record<string, unknown>, object> {
  return { codec: { name, key: 0, minVersion: 0, maxVersion: 0 } as never, handle: () => (clock.advance(takesMs), {}) };
}

const context = { header: { apiKey: 0, apiVersion: 9, correlationId: 1, clientId: 'app-1' }, peer: '10.0.0.7', session: { principal: { type: 'User', name: 'alice' } } } as unknown as RequestContext;

test('a request slower than SLOW_REQUEST_MS logs one warning with api, client and duration; a quick one none', async () => {
  const clock = new ManualClock();
  const records: LogRecord[] = [];
  const [slow, quick] = logSlowRequests(new RecordLogger('info', (record) => records.push(record)), clock, [
    binding('Produce', clock, SLOW_REQUEST_MS + 500),
    binding('Metadata', clock, SLOW_REQUEST_MS),
  ]);
  await slow!.handle({}, context);
  await quick!.handle({}, context);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ level: 'warn', fields: { api: 'Produce', apiVersion: 9, clientId: 'app-1', peer: '10.0.0.7', principal: 'User:alice', durationMs: SLOW_REQUEST_MS + 500 } });
});

test('the wait a request asks for is not slowness: a Fetch long poll is slow only past max.wait.ms', async () => {
  const clock = new ManualClock();
  const records: LogRecord[] = [];
  const [fetch] = logSlowRequests(new RecordLogger('info', (record) => records.push(record)), clock, [binding('Fetch', clock, 5000)]);
  await fetch!.handle({ maxWaitMs: 5000 }, context);
  expect(records).toHaveLength(0);
  await fetch!.handle({ maxWaitMs: 500 }, context);
  expect(records).toHaveLength(1);
});
