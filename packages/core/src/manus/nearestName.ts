/**
 * The known name `name` is most likely a misspelling of (`modle` → `model`, `browserr` →
 * `browser`, `LLM` → `llm`), or undefined when none is near: at most one edit per three
 * characters, two at most, where an edit is a character wrong, missing, extra, or two swapped.
 */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  const typed = name.toLowerCase();
  const allowed = Math.min(2, Math.max(1, Math.floor(typed.length / 3)));
  let best: { readonly name: string; readonly distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(typed, candidate.toLowerCase());
    if (distance <= allowed && (!best || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

/** Optimal string alignment distance: Levenshtein's edits, plus swapping two neighbours as one. */
function editDistance(a: string, b: string): number {
  // Rows i - 2, i - 1 and i of the table over prefixes of a and b.
  let older: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (older[j - 2] ?? 0) + 1);
      row.push(best);
    }
    older = previous;
    previous = row;
  }
  return previous[b.length] ?? 0;
}
