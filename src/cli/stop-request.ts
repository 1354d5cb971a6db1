/**
 * What stops a long-running command (`ferry broker`): SIGTERM, SIGINT, or, when npm started it,
 * the death of the process that started it.
 *
 * Why the last: `npm start` execs the broker (package.json), so npm's forwarding of SIGTERM and
 * SIGINT reaches it; but `npx bun src/cli.ts broker`, an older npm or a shell killed on its own
 * leave a `sh -c` between npm and the broker that dies of the signal without passing it on, and
 * the broker would live on under PID 1, holding its ports, after its supervisor saw npm exit.
 * Outside npm the parent's exit means nothing (`ferry broker &` from a shell that then exits, a
 * daemon started under setsid), so the watch is only for children of npm.
 */

/** How often a broker run by npm checks that its parent lives: an orphan holds its ports at most this long. */
export const PARENT_CHECK_INTERVAL_MS = 1_000;

/** Why the command stops: the signal's name, or PARENT_EXITED. */
export type StopReason = 'SIGTERM' | 'SIGINT' | typeof PARENT_EXITED;
export const PARENT_EXITED = 'parent exited';

/** True when an npm script or npx started this process (npm sets npm_lifecycle_event for both). */
export function startedByNpm(env: Readonly<Record<string, string | undefined>>): boolean {
  return env.npm_lifecycle_event !== undefined;
}

/**
 * Resolves with the first stop request; installed before the broker starts, so none is missed.
 * Every handler and timer is removed once it resolves.
 */
export function nextStopRequest(watchParent: boolean): Promise<StopReason> {
  return new Promise((resolve) => {
    const parentAtStart = process.ppid;
    const stop = (reason: StopReason) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      if (parentTimer !== null) clearInterval(parentTimer);
      resolve(reason);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
    // A dead parent's children are adopted (by PID 1 or a subreaper): process.ppid changes.
    const parentTimer = watchParent
      ? setInterval(() => {
          if (process.ppid !== parentAtStart) stop(PARENT_EXITED);
        }, PARENT_CHECK_INTERVAL_MS)
      : null;
  });
}
