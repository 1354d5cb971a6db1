/**
 * One Ferry broker on loopback (file store WAL, 2 ms uploads, no local flush) for a test file that
 * drives it with kcat: started in beforeAll, stopped and its directory removed in afterAll.
 * `.ci/run` installs kcat from Debian; a machine without it fails the file at once, saying so.
 */
import { afterAll, beforeAll } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { FileStore } from '../../src/store/file.ts';

/** How long one kcat run may take before it is killed (a hang fails the test, not the suite). */
const KCAT_RUN_MS_MAX = 30_000;

export interface KcatRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export interface KcatBroker {
  /** The broker, once beforeAll has run. */
  broker(): Broker;
  /** `host:port` for -b. */
  bootstrap(): string;
  /** kcat -b <broker> `args`, with `input` on its stdin. */
  kcat(args: readonly string[], input?: string): Promise<KcatRun>;
}

export function useKcatBroker(directoryPrefix: string): KcatBroker {
  const kcatPath = Bun.which('kcat');
  const directory = mkdtempSync(join(tmpdir(), directoryPrefix));
  let broker: Broker | undefined;
  beforeAll(async () => {
    if (kcatPath === null) throw new Error('kcat is not installed: apt-get install -y kcat (.ci/run does)');
    const store = await FileStore.open(join(directory, 'objects'));
    broker = await Broker.start({
      listenHost: '127.0.0.1',
      listenPort: 0,
      nodeId: 1,
      engine: { directory: join(directory, 'data'), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
    });
  });
  afterAll(async () => {
    await broker?.stop();
    rmSync(directory, { recursive: true, force: true });
  });
  const started = (): Broker => {
    if (broker === undefined) throw new Error('the kcat broker is started in beforeAll');
    return broker;
  };
  const bootstrap = (): string => `127.0.0.1:${started().port}`;
  return {
    broker: started,
    bootstrap,
    kcat: async (args, input) => {
      const child = Bun.spawn([kcatPath!, '-b', bootstrap(), ...args], { stdin: input === undefined ? 'ignore' : new TextEncoder().encode(input), stdout: 'pipe', stderr: 'pipe' });
      const timer = setTimeout(() => child.kill(), KCAT_RUN_MS_MAX);
      const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      clearTimeout(timer);
      return { stdout, stderr, exitCode };
    },
  };
}
