// A process that makes a sandbox, says its container id, and holds it until it is killed.
import { createDockerSandboxProvider } from '../../src/dockerProvider.js';

const [image = '', workspace] = process.argv.slice(2);
const sandbox = await createDockerSandboxProvider({ image }).create({
  runId: 'crashed-run',
  signal: new AbortController().signal,
  ...(workspace ? { workspace } : {}),
});
process.stdout.write(`${sandbox.containerId}\n`);
setInterval(() => {}, 60_000);
