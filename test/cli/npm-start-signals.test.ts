// `npm start` under a supervisor (Docker's `CMD npm start`, systemd, foreman) gets SIGTERM or
// SIGINT on the process it started: npm. npm passes it on to the script's shell, so unless that
// shell hands its place to the broker (`exec`), the shell dies, npm exits, and the broker lives on
// with parent 1, keeping the Kafka and metrics ports (issue 24). Where a shell stays between npm
// and the broker (npx), the broker notices its parent's death (src/cli/stop-request.ts).
import { afterEach, expect, test } from 'bun:test';
import type { Subprocess } from 'bun';
import { freeLoopbackPort } from '../../bench/lib/child-processes.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const REPOSITORY = `${import.meta.dir}/../..`;
/** npm, then Bun, then the broker's start: a few seconds on a quiet machine, more on a shared one. */
const LISTENING_TIMEOUT_MS = 30_000;
/** A clean stop of an idle broker (flush nothing, close the logs) and npm's exit after it. */
const STOP_TIMEOUT_MS = 15_000;

/** Processes this file started, directly (npm) or not (the broker): killed after each test if still there. */
const leftovers: number[] = [];
afterEach(() => {
  // A broker that outlived npm (the bug) must not outlive the test.
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** True when nothing listens on 127.0.0.1:port (binding it works). */
function portFree(port: number): boolean {
  try {
    Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
}

interface Listening {
  readonly pid: number;
  readonly port: number;
}

/** Collects the child's stdout lines; resolves with the broker's pid and port from its 'listening on' line. */
function watchOutput(stdout: ReadableStream<Uint8Array>, lines: string[]): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no 'listening on' line after ${LISTENING_TIMEOUT_MS} ms:\n${lines.join('\n')}`)), LISTENING_TIMEOUT_MS);
    void (async () => {
      const decoder = new TextDecoder();
      let text = '';
      for await (const chunk of stdout) {
        text += decoder.decode(chunk, { stream: true });
        const complete = text.split('\n');
        text = complete.pop()!;
        for (const line of complete) {
          lines.push(line);
          if (!line.includes('listening on')) continue;
          const fields = JSON.parse(line) as { pid: number; port: number };
          clearTimeout(timer);
          resolve({ pid: fields.pid, port: fields.port });
        }
      }
    })();
  });
}

interface Started {
  readonly npm: Subprocess<'ignore', 'pipe', 'pipe'>;
  readonly broker: Listening;
  readonly metricsPort: number;
  readonly lines: string[];
}

/** Runs `npm <command...> <broker flags>` in the repository; resolves once the broker listens. */
async function startThroughNpm(command: readonly string[]): Promise<Started> {
  const metricsPort = freeLoopbackPort();
  const flags = ['--listen', '127.0.0.1:0', '--metrics', `127.0.0.1:${metricsPort}`, '--data', tempDir()];
  const env = { ...process.env, npm_config_update_notifier: 'false' };
  const npm = Bun.spawn([...command, ...flags], { cwd: REPOSITORY, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env });
  leftovers.push(npm.pid);
  const lines: string[] = [];
  const broker = await watchOutput(npm.stdout, lines);
  leftovers.push(broker.pid);
  expect({ kafkaPortFree: portFree(broker.port), metricsPortFree: portFree(metricsPort) }).toEqual({ kafkaPortFree: false, metricsPortFree: false });
  return { npm, broker, metricsPort, lines };
}

/** Whether npm exited (and how) within STOP_TIMEOUT_MS, and whether the broker and its ports are gone by then. */
async function afterStop(started: Started) {
  const npmExit = await Promise.race([started.npm.exited, Bun.sleep(STOP_TIMEOUT_MS).then(() => 'still running')]);
  const { pid, port } = started.broker;
  await until(() => !alive(pid), `broker process ${pid} to exit`, STOP_TIMEOUT_MS).catch(() => {});
  return { npmExit, brokerAlive: alive(pid), kafkaPortFree: portFree(port), metricsPortFree: portFree(started.metricsPort) };
}

const GONE = { brokerAlive: false, kafkaPortFree: true, metricsPortFree: true };

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to npm start stops the broker: it flushes, exits 0, and frees its ports`, async () => {
    const started = await startThroughNpm(['npm', 'start', '--']);
    started.npm.kill(signal);
    // npm exits with its script's exit code: the broker's, since the script is the broker itself.
    expect(await afterStop(started)).toEqual({ npmExit: 0, ...GONE });
    expect(started.lines.join('\n')).toContain(`${signal}: flushing and stopping`);
  });
}

test('SIGTERM to npx, whose shell dies of it without passing it on: the broker sees its parent gone and stops', async () => {
  const started = await startThroughNpm(['npx', 'bun', 'src/cli.ts', 'broker']);
  started.npm.kill('SIGTERM');
  // npx's exit code is its shell's death by SIGTERM (128 + 15): the broker's own is not observable here.
  expect(await afterStop(started)).toEqual({ npmExit: 143, ...GONE });
  expect(started.lines.join('\n')).toContain('parent exited: flushing and stopping');
});
