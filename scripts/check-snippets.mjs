// Type-checks every TypeScript block of the READMEs and the site's pages (see scripts/snippets.mjs)
// against the built packages (run `pnpm build` first). Prints each failing block and its errors;
// exits 1 if any fails. Usage: node scripts/check-snippets.mjs [file.md …]
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { checkSnippets, markdownFiles, root } from './snippets.mjs';

const wanted = process.argv.slice(2).map((file) => relative(root, resolve(file)));
const names = wanted.length > 0 ? wanted : markdownFiles();
const { checked, failures } = checkSnippets(
  names.map((name) => ({ name, text: readFileSync(join(root, name), 'utf8') })),
);
for (const [key, messages] of failures) console.log(`${key}\n  ${messages.join('\n  ')}`);
console.log(`${checked} blocks checked, ${failures.size} failing`);
process.exitCode = failures.size > 0 ? 1 : 0;
