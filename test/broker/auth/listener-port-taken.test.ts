// A broker whose second listener cannot listen (its port is taken) fails to start and lets go of
// what it started: its first listener's port and its log directory, so it can start again.
import { afterEach, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { startSecureBroker, stopBrokers } from './brokers.ts';

const running: Broker[] = [];

afterEach(async () => {
  await stopBrokers(running);
});

test('a listener that cannot listen stops the start; the listeners already started are stopped with it', async () => {
  const squatter = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const first = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const firstPort = first.port;
  first.stop(true); // free now: the broker's first listener takes it
  try {
    const listeners = [
      { name: 'ONE', protocol: 'PLAINTEXT' as const, host: '127.0.0.1', port: firstPort },
      { name: 'TWO', protocol: 'PLAINTEXT' as const, host: '127.0.0.1', port: squatter.port },
    ];
    await expect(startSecureBroker({ listeners }, running)).rejects.toThrow();
    // The first listener's port is free again: a broker can take it.
    const again = await startSecureBroker({ listeners: [listeners[0]!] }, running);
    expect(again.port('ONE')).toBe(firstPort);
  } finally {
    squatter.stop(true);
  }
});
