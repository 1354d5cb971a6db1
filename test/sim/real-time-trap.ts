/** Where the code under simulation lives (the stack frames that count). */
const SOURCE_DIRECTORY = new URL('../../src/', import.meta.url).pathname;
/** Deep enough to see from a trapped call back to Ferry's code through library frames. */
const STACK_FRAMES = 50;

/**
 * Records every reach for real time, real randomness or real sockets while installed: a test
 * running code under simulation asserts the list stays empty. The scheduler's own turn
 * (drainMicrotasks' setImmediate) is the one use let through unrecorded.
 */
export class RealTimeTrap {
  readonly reaches: string[] = [];
  readonly #restore: (() => void)[] = [];

  #stackTraceLimit = Error.stackTraceLimit;

  install(): void {
    this.#stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = STACK_FRAMES;
    const record = (name: string) => {
      const stack = new Error().stack ?? '';
      if (name === 'setImmediate' && stack.includes('drainMicrotasks')) return;
      // Only Ferry's own code counts: a library or test of another file may still run its timers in this process.
      if (!stack.split('\n').some((frame) => frame.includes(SOURCE_DIRECTORY))) return;
      this.reaches.push(`${name}\n${stack.split('\n').slice(2, 8).join('\n')}`);
    };
    this.#wrap(globalThis as unknown as Record<string, unknown>, ['setTimeout', 'setInterval', 'setImmediate'], record);
    this.#wrap(Date as unknown as Record<string, unknown>, ['now'], (n) => record(`Date.${n}`));
    this.#wrap(performance as unknown as Record<string, unknown>, ['now'], (n) => record(`performance.${n}`));
    this.#wrap(Math as unknown as Record<string, unknown>, ['random'], (n) => record(`Math.${n}`));
    this.#wrap(crypto as unknown as Record<string, unknown>, ['getRandomValues', 'randomUUID'], (n) => record(`crypto.${n}`));
    this.#wrap(Bun as unknown as Record<string, unknown>, ['sleep', 'connect', 'listen', 'serve'], (n) => record(`Bun.${n}`));
  }

  uninstall(): void {
    Error.stackTraceLimit = this.#stackTraceLimit;
    for (const restore of this.#restore.splice(0).reverse()) restore();
  }

  #wrap(target: Record<string, unknown>, names: string[], record: (name: string) => void): void {
    for (const name of names) {
      const original = target[name] as (...args: unknown[]) => unknown;
      const descriptor = Object.getOwnPropertyDescriptor(target, name);
      const wrapped = function (this: unknown, ...args: unknown[]) {
        record(name);
        return original.apply(this, args);
      };
      if (descriptor === undefined || descriptor.configurable === true) {
        Object.defineProperty(target, name, { configurable: true, writable: true, value: wrapped });
        this.#restore.push(() => (descriptor === undefined ? delete target[name] : Object.defineProperty(target, name, descriptor)));
      } else {
        target[name] = wrapped; // a fixed property of Bun's: assignable only
        this.#restore.push(() => void (target[name] = original));
      }
    }
  }
}
