export interface DiffRow {
  left: string | null;
  right: string | null;
  kind: 'same' | 'removed' | 'added' | 'changed';
}

/** Side-by-side rows from a longest-common-subsequence line diff (prompts are short, O(n·m) is fine). */
export function sideBySide(before: string, after: string): DiffRow[] {
  const a = before.split('\n');
  const b = after.split('\n');
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
  }
  const rows: DiffRow[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      rows.push({ left: a[i++], right: b[j++], kind: 'same' });
    } else if (j < b.length && (i >= a.length || table[i][j + 1] > table[i + 1][j])) {
      // Removals come first, so a removal followed by an addition reads as one changed line.
      const previous = rows[rows.length - 1];
      if (previous?.kind === 'removed' && previous.right === null) {
        previous.right = b[j++];
        previous.kind = 'changed';
      } else rows.push({ left: null, right: b[j++], kind: 'added' });
    } else {
      rows.push({ left: a[i++], right: null, kind: 'removed' });
    }
  }
  return rows;
}
