import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// V8 (Node 20) gives `{ ...object, newKey }` a hidden class of its own at every call: states made
// that way would each have their own, and every read of them in the shell and the policies would
// miss its inline cache. This drives the built reducer through a long run in a child process that
// can ask V8 whether two objects share a hidden class.
const coreDist = new URL('../dist/index.js', import.meta.url).href;
const kernelDist = new URL('../dist/kernel/index.js', import.meta.url).href;
const internalDist = new URL('../dist/internal/index.js', import.meta.url).href;

function hiddenClassesOver(steps: number): { states: number; afterModel: number; afterTool: number } {
  const script = `
    const { createAgent, createStep, defaultPolicies, initialState } = await import(${JSON.stringify(kernelDist)});
    const { defineTool } = await import(${JSON.stringify(coreDist)});
    const step = createStep(defaultPolicies({ maxSteps: 100000 }));
    const add = defineTool({ name: 'add', description: 'Add', parameters: { type: 'object', properties: { a: { type: 'number' } } }, execute: () => '1' });
    const { config } = createAgent({ name: 'a', systemPrompt: 'You add.', tools: [add], memory: { maxMessages: 100000 } });
    const afterModel = [], afterTool = [];
    let [state, effects] = step(config, initialState(), { type: 'started', input: 'Add.', runId: 'r' });
    for (let i = 0; i < ${steps}; i++) {
      const llm = effects.find((e) => e.type === 'callLlm');
      [state, effects] = step(config, state, { type: 'llmResponded', effectId: llm.id, content: '', toolCalls: [{ id: 'c' + i, name: 'add', arguments: '{"a":' + i + '}' }] });
      afterModel.push(state);
      const tool = effects.find((e) => e.type === 'callTool');
      [state, effects] = step(config, state, { type: 'toolCompleted', effectId: tool.id, output: String(i) });
      afterTool.push(state);
    }
    const classes = (states) => states.reduce((seen, s) => (seen.some((o) => %HaveSameMap(o, s)) ? seen : [...seen, s]), []).length;
    console.log(JSON.stringify({ states: classes([...afterModel, ...afterTool]), afterModel: classes(afterModel), afterTool: classes(afterTool) }));
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('the states of a run', () => {
  it('keep a few hidden classes however long the run, so reads of them stay cached', () => {
    const { states, afterModel, afterTool } = hiddenClassesOver(200);
    // The first steps may settle a class or two (field types generalise); a class per step would be 200.
    expect(afterModel).toBeLessThanOrEqual(3);
    expect(afterTool).toBeLessThanOrEqual(3);
    expect(states).toBeLessThanOrEqual(6);
  });
});

// A tool's scope is made per call: a getter written in its literal, or the run's scope spread with
// keys added after it, gives each scope a dictionary of properties or a class of its own.
function toolScopeShapes(calls: number): { classes: number; fast: boolean } {
  const script = `
    const { defineTool } = await import(${JSON.stringify(coreDist)});
    const { executeTool } = await import(${JSON.stringify(internalDist)});
    const scopes = [];
    const look = defineTool({ name: 'look', description: 'Look', parameters: { type: 'object', properties: {} }, execute: (_args, scope) => { scopes.push(scope); return 'ok'; } });
    const run = { runId: 'r', signal: new AbortController().signal, llm: { model: 'm', complete: async () => ({ ok: false, error: { kind: 'config', message: 'none' } }) }, workspace: '/w', resource: async (_k, open) => open(), emit: () => {}, changeTools: async () => {}, takesDeltas: () => false };
    for (let i = 0; i < ${calls}; i++) await executeTool({ type: 'callTool', id: 'running-' + i + '-0', call: { id: 'c' + i, name: 'look', arguments: '{}' }, args: {}, parallelSafe: true }, look, run);
    const classes = scopes.reduce((seen, s) => (seen.some((o) => %HaveSameMap(o, s)) ? seen : [...seen, s]), []).length;
    console.log(JSON.stringify({ classes, fast: scopes.every((s) => %HasFastProperties(s)) }));
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

describe('the scopes tools get', () => {
  it('share one hidden class with fast properties, call after call', () => {
    const { classes, fast } = toolScopeShapes(50);
    expect(fast).toBe(true);
    expect(classes).toBe(1);
  });
});
