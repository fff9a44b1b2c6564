// One contender on one cost task, in a process of its own (the peers set globals):
// node --import ../guard.mjs run.mjs <contender> <research|demo> <options-json>. Prints {"answer": …}.
import { existsSync } from 'node:fs';

const [contender, taskName, optionsJson] = process.argv.slice(2);
// Ours and the raw loop live in ./contenders, the peers (with their own node_modules) in ../peers/cost.
const file = [new URL('./contenders/', import.meta.url), new URL('../peers/cost/', import.meta.url)]
  .map((dir) => new URL(`${contender}.mjs`, dir))
  .find((url) => existsSync(url));
if (!file) throw new Error(`unknown contender ${contender}`);
const driver = await import(file.href);
if (!driver[taskName]) throw new Error(`${contender} cannot run the ${taskName} task`);
const answer = await driver[taskName](JSON.parse(optionsJson));
console.log(JSON.stringify({ answer }));
// Browsers, pools and keep-alive sockets of some frameworks would hold the process open.
process.exit(0);
