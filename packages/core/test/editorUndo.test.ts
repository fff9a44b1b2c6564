import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../src/kernel/agent.js';
import type { LlmRequest } from '../src/kernel/effects.js';
import { defaultPolicies } from '../src/kernel/policies.js';
import type { AgentState } from '../src/kernel/state.js';
import type { LlmPort } from '../src/llm/llm.js';
import { portComplete } from '../src/llm/llm.js';
import { resume, run } from '../src/shell/run.js';
import type { ScriptedReply } from '../src/testing/script.js';
import { scriptedLlm } from '../src/testing/scriptedLlm.js';
import type { Tool } from '../src/tools/defineTool.js';
import { createStrReplaceEditor } from '../src/tools/strReplaceEditor.js';

let workspace: string;
beforeEach(async () => {
  // The real path: the editor keys its history on resolved paths (macOS's /tmp is a symlink).
  workspace = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-undo-')));
});
afterEach(async () => {
  await rm(workspace, { recursive: true, force: true });
});

const EDITOR = 'str_replace_editor';

/** An agent with its own editor instance (or the one given, to share it between runs). */
function editorAgent(editor: Tool = createStrReplaceEditor({ workspace })) {
  return createAgent({
    name: 'coder',
    tools: [editor],
    nextStepPrompt: NEXT,
    policies: defaultPolicies({ maxSteps: 40 }),
    tokenizer: 'estimate',
  });
}

/** Sent last in every request, never stored: what comes before it is the history. */
const NEXT = 'What next?';

/** How many replies the model gave in the current task (since the history's last user message). */
const turnOf = (request: LlmRequest) => {
  const history = request.messages.slice(0, -1);
  const task = history.findLastIndex((m) => m.role === 'user');
  return history.slice(task).filter((m) => m.role === 'assistant').length;
};

type Args = Record<string, unknown>;
const edit = (args: Args): ScriptedReply => ({ toolCalls: [{ name: EDITOR, arguments: args }] });
const replace = (path: string, old_str: string, new_str: string) =>
  edit({ command: 'str_replace', path, old_str, new_str });
const undo = (path: string) => edit({ command: 'undo_edit', path });

/** A model that replies from a list by turn, so a request sent again gets the same reply. */
const byTurn = (replies: readonly ScriptedReply[]) =>
  scriptedLlm((request) => replies[turnOf(request)] ?? { content: 'done' });

/** A model that waits for `before(turn)` before answering that turn's request. */
function waitingAt(llm: LlmPort, before: (turn: number) => Promise<void> | undefined): LlmPort {
  return {
    model: llm.model,
    complete: portComplete(async (request, options) => {
      await before(turnOf(request));
      return llm.complete(request, options);
    }),
  };
}

function deferred() {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** The editor's outputs in a run, in order. */
const observations = (state: AgentState) =>
  state.messages.filter((m) => m.role === 'tool' && m.name === EDITOR).map((m) => m.content);

const historyOf = (state: AgentState) => state.toolData?.[EDITOR] as Record<string, readonly unknown[]> | undefined;

describe('str_replace_editor undo history, through runs', () => {
  it('is per run: a run cannot undo another run’s edit, even with the same editor at the same time', async () => {
    const a = join(workspace, 'a.txt');
    const b = join(workspace, 'b.txt');
    await writeFile(a, 'alpha\n');
    await writeFile(b, 'beta\n');
    const agent = editorAgent();
    const aEdited = deferred();
    const bFinished = deferred();
    // A edits a.txt, then waits for B to finish; B starts its undos once A's edit is done.
    const llmA = waitingAt(byTurn([replace(a, 'alpha', 'ALPHA'), undo(a)]), (turn) => {
      if (turn !== 1) return undefined;
      aEdited.resolve();
      return bFinished.promise;
    });
    const llmB = waitingAt(byTurn([replace(b, 'beta', 'BETA'), undo(a), undo(b)]), (turn) =>
      turn === 1 ? aEdited.promise : undefined,
    );
    const runA = run(agent, 'edit a', { llm: llmA, runId: 'A' });
    const outcomeB = await run(agent, 'edit b', { llm: llmB, runId: 'B' });
    expect(await readFile(a, 'utf8')).toBe('ALPHA\n');
    bFinished.resolve();
    const outcomeA = await runA;

    const [, bUndoesA, bUndoesB] = observations(outcomeB.state);
    expect(bUndoesA).toBe(`Error: No edit history found for ${a}.`);
    expect(bUndoesB).toMatch(/^Last edit to .*b\.txt undone successfully/);
    expect(observations(outcomeA.state)[1]).toMatch(/^Last edit to .*a\.txt undone successfully/);
    expect(await readFile(a, 'utf8')).toBe('alpha\n');
    expect(await readFile(b, 'utf8')).toBe('beta\n');
  });

  it('survives a resume: the history is in the saved state, not in the editor', async () => {
    const a = join(workspace, 'a.txt');
    await writeFile(a, 'one\ntwo\n');
    const llm = byTurn([replace(a, 'two', 'TWO'), undo(a)]);
    let saved = '';
    const first = await run(editorAgent(), 'edit then undo', {
      llm,
      checkpoint: (state) => {
        // The process "dies" once the model has asked for the undo.
        if (state.status === 'awaiting_tools' && state.step === 2) throw new Error('killed');
        saved = JSON.stringify(state);
      },
    });
    expect(first.status).toBe('failed');
    expect(await readFile(a, 'utf8')).toBe('one\nTWO\n');

    // Another process: a new editor instance, the state from JSON.
    const resumed = await resume(editorAgent(), JSON.parse(saved), { llm });
    expect(resumed.status).toBe('finished');
    expect(observations(resumed.state).at(-1)).toMatch(/^Last edit to .*a\.txt undone successfully/);
    expect(await readFile(a, 'utf8')).toBe('one\ntwo\n');
  });

  it('undoes a creation by removing the file, after a resume too', async () => {
    const path = join(workspace, 'new.txt');
    const llm = byTurn([edit({ command: 'create', path, file_text: 'fresh' }), undo(path)]);
    let saved = '';
    await run(editorAgent(), 'create then undo', {
      llm,
      checkpoint: (state) => {
        if (state.status === 'awaiting_tools' && state.step === 2) throw new Error('killed');
        saved = JSON.stringify(state);
      },
    });
    expect(await readFile(path, 'utf8')).toBe('fresh');
    const resumed = await resume(editorAgent(), JSON.parse(saved), { llm });
    expect(observations(resumed.state).at(-1)).toBe(`Undid the creation of ${path}: the file was removed.`);
    await expect(readFile(path, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('two edits of one file in one turn can both be undone', async () => {
    const a = join(workspace, 'a.txt');
    await writeFile(a, 'red green\n');
    const llm = byTurn([
      {
        toolCalls: [
          { name: EDITOR, arguments: { command: 'str_replace', path: a, old_str: 'red', new_str: 'RED' } },
          { name: EDITOR, arguments: { command: 'str_replace', path: a, old_str: 'green', new_str: 'GREEN' } },
        ],
      },
      undo(a),
      { content: 'undo again', toolCalls: [{ name: EDITOR, arguments: { command: 'undo_edit', path: a } }] },
    ]);
    const outcome = await run(editorAgent(), 'edit twice, undo twice', { llm });

    expect(observations(outcome.state).slice(2)).toEqual([
      expect.stringMatching(/^Last edit to .*a\.txt undone successfully/),
      expect.stringMatching(/^Last edit to .*a\.txt undone successfully/),
    ]);
    expect(await readFile(a, 'utf8')).toBe('red green\n');
  });

  it('keeps at most 10 undo steps per file: of 15 edits, the last 10 can be undone', async () => {
    const a = join(workspace, 'a.txt');
    await writeFile(a, 'v0');
    const agent = editorAgent();
    const edits = Array.from({ length: 15 }, (_, i) => replace(a, `v${i}`, `v${i + 1}`));
    const edited = await run(agent, 'edit 15 times', { llm: byTurn(edits) });
    expect(await readFile(a, 'utf8')).toBe('v15');
    expect(historyOf(edited.state)?.[a]).toHaveLength(10);

    // The next task of the same conversation undoes 11 times.
    const undos = Array.from({ length: 11 }, () => undo(a));
    const undone = await run(agent, 'undo everything', { llm: byTurn(undos), state: edited.state });
    const results = observations(undone.state).slice(15);
    expect(results).toHaveLength(11);
    expect(results.slice(0, 10).every((r) => r.startsWith(`Last edit to ${a} undone successfully`))).toBe(true);
    expect(results[10]).toBe(`Error: No edit history found for ${a}.`);
    expect(await readFile(a, 'utf8')).toBe('v5');
  });

  it('keeps the previous contents it holds bounded in size, however large the files', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const big = (name: string) => `MARK-${name}-0\n${line.repeat(5_000)}`;
    const files = ['a.txt', 'b.txt', 'c.txt'].map((name) => join(workspace, name));
    for (const [i, file] of files.entries()) await writeFile(file, big(String(i)));
    expect((await readFile(files[0] ?? '', 'utf8')).length).toBeGreaterThan(500_000);
    // 8 edits of each 500 KB file, in turn: 12 MB of previous contents if all were kept.
    const edits: ScriptedReply[] = [];
    for (let n = 0; n < 8; n++) {
      for (const [i, file] of files.entries()) edits.push(replace(file, `MARK-${i}-${n}\n`, `MARK-${i}-${n + 1}\n`));
    }
    const outcome = await run(editorAgent(), 'edit big files', { llm: byTurn(edits) });
    expect(observations(outcome.state).filter((o) => o.startsWith('Error'))).toEqual([]);

    const kept = JSON.stringify(outcome.state.toolData ?? {}).length;
    expect(kept).toBeLessThan(2_100_000);
    expect(kept).toBeGreaterThan(500_000);
    // The last edit can still be undone.
    const last = files[2] ?? '';
    const undone = await run(editorAgent(), 'undo', { llm: byTurn([undo(last)]), state: outcome.state });
    expect(observations(undone.state).at(-1)).toMatch(/undone successfully/);
    expect((await readFile(last, 'utf8')).startsWith('MARK-2-7\n')).toBe(true);
  });

  it('keeps no copy of a file too large for the bound, says the edit cannot be undone, and keeps other files’ history', async () => {
    const small = join(workspace, 'small.txt');
    const huge = join(workspace, 'huge.txt');
    await writeFile(small, 'tiny\n');
    await writeFile(huge, `HEAD\n${`${'y'.repeat(99)}\n`.repeat(25_000)}`);
    const llm = byTurn([replace(small, 'tiny', 'TINY'), replace(huge, 'HEAD', 'head'), undo(huge), undo(small)]);
    const outcome = await run(editorAgent(), 'edit both, undo both', { llm });

    const [, editedHuge, undoHuge, undoSmall] = observations(outcome.state);
    expect(editedHuge).toMatch(/^The file .*huge\.txt has been edited\./);
    expect(editedHuge).toMatch(/This edit cannot be undone: the file was too large/);
    expect(undoHuge).toBe(`Error: No edit history found for ${huge}.`);
    expect(undoSmall).toMatch(/^Last edit to .*small\.txt undone successfully/);
    expect((await readFile(huge, 'utf8')).startsWith('head\n')).toBe(true);
    expect(await readFile(small, 'utf8')).toBe('tiny\n');
    // At no point did the state hold the large file's previous content.
    expect(JSON.stringify(outcome.state).length).toBeLessThan(100_000);
  });
});
