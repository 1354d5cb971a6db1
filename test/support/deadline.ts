/** `promise`, or a rejection naming `what` (and whatever `context` says then) once `timeoutMs` passed. */
export async function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string, context: () => string = () => ''): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms${context()}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
