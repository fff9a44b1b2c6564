// One bench measurement in a process of its own: its last stdout line is its JSON result.
import { spawn } from 'node:child_process';

/**
 * Runs `node <args>` with a bare environment (plus `env`) and resolves with the JSON of its last
 * line, or `{ error }` naming the exit code and the stderr line that says why.
 */
export function childJson(args, env = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production', ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => {
      const last = out.trim().split('\n').at(-1);
      if (code === 0 && last?.startsWith('{')) return resolve(JSON.parse(last));
      const lines = err.trim().split('\n');
      const why = lines.find((l) => /error|refused/i.test(l)) ?? lines.at(-1) ?? '';
      resolve({ error: `exit ${code}: ${why.slice(0, 200)}` });
    });
  });
}
