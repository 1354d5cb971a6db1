// A broker out of file descriptors with clients still connecting (finding 18, adversarial review).
// Bun's listener retries a failed accept(2) (EMFILE) at once and forever while the connection
// waits in the backlog: the broker, otherwise idle, burnt most of a core for as long as the
// clients kept trying, starving its own requests and everything else on the machine. A broker
// short of descriptors must stop accepting (and say so) until some are free, not spin.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);

const FD_LIMIT = 64;
/** More connections than descriptors: the last ones wait in the listen backlog. */
const CONNECTIONS = 120;
const MEASURE_MS = 2000;
/** Linux's USER_HZ: the clock ticks /proc/<pid>/stat counts in. */
const TICKS_PER_SECOND = 100;
/** An idle broker uses about none; a spinning one takes whatever a core gives it (even on a loaded machine, far more than this). */
const IDLE_CPU_SHARE_MAX = 0.1;

const brokers: BrokerProcess[] = [];
afterAll(() => killAll(brokers));

/** User plus system CPU time of a process, in ticks. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

async function cpuShare(pid: number): Promise<number> {
  const before = cpuTicks(pid);
  const startedMs = performance.now();
  await Bun.sleep(MEASURE_MS);
  return (cpuTicks(pid) - before) / TICKS_PER_SECOND / ((performance.now() - startedMs) / 1000);
}

// Open: at the descriptor limit Bun's listener retries the failed accept at once (a Bun bug, an
// open upstream fix); --max-connections below the fd limit avoids it. Kept as a todo;
// `bun test --todo` runs it (and it fails today).
test.todo('with its descriptors used up by connections, an idle broker does not spin on accept', async () => {
  const broker = new BrokerProcess({ nodeId: 1, data: tempDir(), fdLimit: FD_LIMIT, args: ['--no-auto-create'] });
  brokers.push(broker);
  await broker.start();
  const pid = broker.pid!;
  expect(await cpuShare(pid)).toBeLessThan(IDLE_CPU_SHARE_MAX); // the baseline: idle

  const [host, port] = [broker.bootstrap.split(':')[0]!, Number(broker.bootstrap.split(':')[1])];
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => Bun.connect({ hostname: host, port, socket: { data() {}, close() {}, error() {} } }).catch(() => null)));
  try {
    const share = await cpuShare(pid);
    expect(broker.running).toBe(true);
    expect(share).toBeLessThan(IDLE_CPU_SHARE_MAX);
  } finally {
    for (const socket of sockets) socket?.end();
  }
});
