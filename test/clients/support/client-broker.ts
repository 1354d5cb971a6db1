// One real `ferry broker` process per client test file, on a free loopback port over a fresh
// data directory: what a user runs, so a client meets the same code path as in production.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess } from '../../support/broker-process.ts';

/** WAL objects close this soon after their first append, so acks=all answers quickly. */
const UPLOAD_INTERVAL_MS = 5;

export interface ClientBroker {
  readonly process: BrokerProcess;
  readonly bootstrap: string;
  stop(): Promise<void>;
}

/** Starts a broker (node id 1, Kafka's defaults otherwise) and resolves once it listens. */
export async function startClientBroker(client: string): Promise<ClientBroker> {
  const data = mkdtempSync(join(tmpdir(), `ferry-${client}-`));
  const process = new BrokerProcess({ nodeId: 1, data, args: ['--upload-interval-ms', String(UPLOAD_INTERVAL_MS)] });
  await process.start();
  return {
    process,
    bootstrap: process.bootstrap,
    async stop() {
      await process.terminate();
      rmSync(data, { recursive: true, force: true });
    },
  };
}
