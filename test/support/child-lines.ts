import type { Subprocess } from 'bun';

/** Reads a child's stdout line by line, handing each to `onLine`, until it returns false or the child ends. */
export async function readLines(child: Subprocess<'ignore', 'pipe', 'inherit'>, onLine: (line: string) => boolean): Promise<void> {
  const reader = child.stdout.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    text += new TextDecoder().decode(value);
    const lines = text.split('\n');
    text = lines.pop()!;
    for (const line of lines) if (!onLine(line)) return;
  }
}
