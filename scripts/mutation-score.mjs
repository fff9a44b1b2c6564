// Prints "mutation score: X% (killed K of N)" from Stryker's JSON report (written by `pnpm mutate`).
// With --survivors, also lists every surviving or uncovered mutant as file:line  mutator  original -> replacement.
import { readFileSync } from 'node:fs';

const reportPath = 'reports/mutation/mutation.json';
const report = JSON.parse(readFileSync(reportPath, 'utf8'));
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

let detected = 0;
let valid = 0;
const survivors = [];
for (const [file, { source, mutants }] of Object.entries(report.files)) {
  const lines = source.split('\n');
  for (const mutant of mutants) {
    if (DETECTED.has(mutant.status)) detected += 1;
    if (DETECTED.has(mutant.status) || UNDETECTED.has(mutant.status)) valid += 1;
    if (UNDETECTED.has(mutant.status)) {
      const { start, end } = mutant.location;
      const original =
        start.line === end.line
          ? (lines[start.line - 1] ?? '').slice(start.column - 1, end.column - 1)
          : `${(lines[start.line - 1] ?? '').slice(start.column - 1)}…`;
      survivors.push(
        `${file}:${start.line}:${start.column}  ${mutant.status}  ${mutant.mutatorName}  ${oneLine(original)} -> ${oneLine(mutant.replacement ?? '')}`,
      );
    }
  }
}

if (process.argv.includes('--survivors')) console.log(survivors.join('\n'));
const score = valid === 0 ? 100 : (100 * detected) / valid;
console.log(`mutation score: ${score.toFixed(2)}% (killed ${detected} of ${valid})`);

function oneLine(text) {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 97)}...` : flat;
}
