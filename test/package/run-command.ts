/** What a finished command said. */
export interface CommandResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly elapsedMs: number;
}

/** Runs `command` in `cwd` to its end (killed after `timeoutMs`), with `env` over this process's environment. */
export async function runCommand(command: readonly string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}): Promise<CommandResult> {
  const started = performance.now();
  const child = Bun.spawn([...command], { cwd, env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe', timeout: timeoutMs });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr, elapsedMs: Math.round(performance.now() - started) };
}

/** runCommand, failing with what the command printed unless it exits 0. */
export async function runOrFail(command: readonly string[], cwd: string, timeoutMs: number, env: Record<string, string> = {}): Promise<CommandResult> {
  const result = await runCommand(command, cwd, timeoutMs, env);
  if (result.exitCode !== 0) throw new Error(`${command.join(' ')} exited ${result.exitCode} in ${cwd}:\n${result.stdout}\n${result.stderr}`);
  return result;
}
