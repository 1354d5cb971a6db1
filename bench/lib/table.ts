/** A plain-text table: a header row, a rule, then rows; text columns left, numbers right. */
export interface Column {
  readonly title: string;
  readonly align?: 'left' | 'right';
}

export function formatTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const widths = columns.map((column, index) => Math.max(column.title.length, ...rows.map((row) => (row[index] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    columns
      .map((column, index) => {
        const cell = cells[index] ?? '';
        return column.align === 'left' ? cell.padEnd(widths[index]!) : cell.padStart(widths[index]!);
      })
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [line(columns.map((column) => column.title)), rule, ...rows.map(line)].join('\n');
}

export function printTable(title: string, columns: readonly Column[], rows: readonly (readonly string[])[]): void {
  console.log(`\n${title}\n${formatTable(columns, rows)}`);
}
