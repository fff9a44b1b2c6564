// The agents: the page context fed into the next step while the browser is in use (and not after),
// older page states shrunk in memory to what their action did (core's keepFullObservations), the
// BrowserAgent preset and Manus with a browser.
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AgentState,
  createManus,
  isStepLimit,
  isTokenBudget,
  type Message,
  manusNextStepPrompt,
  run,
  type StepFunction,
  step,
  withApprovals,
} from '@openmanus/core';
import { assistantMessage, initialState, userMessage } from '@openmanus/core/kernel';
import { type ScriptedLlm, scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { browserNextStepPrompt, createBrowserAgent, withBrowser } from '../src/agents/browserAgent.js';
import { PAGE_CONTEXT, pageContext } from '../src/agents/pageContext.js';
import { browserHarness, chromePath, refIn } from './harness.js';

const chrome = chromePath();

const call = (name: string, id: string) => assistantMessage('', [{ id, name, arguments: '{}' }]);
const result = (name: string, id: string, content: string): Message => ({
  role: 'tool',
  toolCallId: id,
  name,
  content,
});

describe('pageContext', () => {
  const tool = createBrowserAgent().tools[0];
  if (!tool) throw new Error('no tool');
  const { provider } = pageContext(tool as never);
  const stateWith = (messages: Message[]): AgentState => ({ ...initialState(), messages });

  it('asks for the page while browser_use was called in the last three messages, then not', () => {
    const used = [userMessage('task'), call('browser_use', 'a'), result('browser_use', 'a', 'ok')];
    expect(provider.when(stateWith(used))).toBe(true);
    const later = [...used, call('terminate', 'b'), result('terminate', 'b', 'ok')];
    expect(provider.when(stateWith(later.slice(0, 4)))).toBe(true);
    expect(provider.when(stateWith(later))).toBe(false);
  });

  it('gives the state after the history as the result of a get_current_state call, the screenshot with it; nothing when it failed', () => {
    const request = { nextStepPrompt: 'Next?', messages: [] };
    const image = { base64: '/9j/', mimeType: 'image/jpeg' };
    const pageCall = assistantMessage('', [
      { id: 'browser_page_state', name: 'browser_use', arguments: '{"action":"get_current_state"}' },
    ]);
    const observation = {
      role: 'tool',
      toolCallId: 'browser_page_state',
      name: 'browser_use',
      content: 'The browser now, before this step:\nURL: https://a/',
    };
    expect(provider.apply({ state: 'URL: https://a/' }, request)).toEqual({
      nextStepPrompt: 'Next?',
      messages: [pageCall, observation],
    });
    expect(provider.apply({ state: 'URL: https://a/', screenshot: image }, request).messages).toEqual([
      pageCall,
      { ...observation, image },
    ]);
    expect(provider.apply(undefined, request)).toBe(request);
  });
});

describe('createBrowserAgent', () => {
  it("is OpenManus's BrowserAgent: browser_use and terminate, 20 steps, observations cut at 10000", () => {
    const agent = createBrowserAgent();
    expect(agent.config).toMatchObject({ name: 'browser', maxObserve: 10_000, llmProfile: 'browser' });
    expect(agent.policies?.find(isStepLimit)?.maxSteps).toBe(20);
    expect(agent.policies?.some(isTokenBudget)).toBe(false);
    const budgeted = createBrowserAgent({ maxSteps: 4, maxInputTokens: 5_000 });
    expect(budgeted.policies?.find(isStepLimit)?.maxSteps).toBe(4);
    expect(budgeted.policies?.find(isTokenBudget)?.maxInputTokens).toBe(5_000);
    expect(agent.tools.map((tool) => tool.spec.name)).toEqual(['browser_use', 'terminate']);
    expect(agent.config.contextProviders?.map((provider) => provider.name)).toEqual([PAGE_CONTEXT]);
    expect(agent.config.systemPrompt).not.toMatch(/\{\{|"done"|JSON/);
    expect(agent.config.keepFullObservations).toBe(0);
  });
});

describe('withBrowser', () => {
  it("adds browser_use and the page context, keeps no page state in memory (the context shows the current one), and keeps the agent's step", () => {
    const own: StepFunction = (config, state, event) => step(config, state, event);
    const manus = createManus({ workspace: 'workspace' });
    const browsing = withBrowser({ ...manus, step: own });
    expect(browsing.tools.map((tool) => tool.spec.name)).toEqual([
      ...manus.tools.map((t) => t.spec.name),
      'browser_use',
    ]);
    expect(browsing.config.tools.map((tool) => tool.name)).toContain('browser_use');
    expect(browsing.config.contextProviders?.map((provider) => provider.name)).toContain(PAGE_CONTEXT);
    expect(browsing.config.keepFullObservations).toBe(0);
    expect(browsing.step).toBe(own);
    expect(withBrowser(manus).step).toBe(manus.step);
  });

  it('keeps the policies its step was made from: a rule can still be added, and the step limit stays', () => {
    const manus = createManus({ workspace: 'workspace', maxSteps: 12 });
    const browsing = withBrowser(manus);
    expect(browsing.policies).toBe(manus.policies);
    expect(browsing.policies?.find(isStepLimit)?.maxSteps).toBe(12);
    const gated = withApprovals(browsing, ['browser_use']);
    expect(gated.policies?.map((policy) => policy.name)).toEqual([
      'stepLimit',
      'stuck',
      'terminalTools',
      'requireApproval',
    ]);
  });
});

describe.skipIf(!chrome)('the agents in a real Chromium', () => {
  const h = browserHarness(chrome ?? '');
  /** The text of the last user message of a request: the next-step prompt with what providers added. */
  const lastPrompt = (llm: ScriptedLlm, index: number) =>
    String(llm.requests[index]?.messages.findLast((message) => message.role === 'user')?.content);
  /** The page context of a request: the result of the get_current_state call it adds. */
  const pageState = (llm: ScriptedLlm, index: number) =>
    String(llm.requests[index]?.messages.find((message) => isPageState(message))?.content);
  const isPageState = (message: Message) => message.role === 'tool' && message.toolCallId === 'browser_page_state';
  /** The last observation of a tool the model called. */
  const lastObservation = (llm: ScriptedLlm, index: number) =>
    String(
      llm.requests[index]?.messages.findLast((message) => message.role === 'tool' && !isPageState(message))?.content,
    );

  it('BrowserAgent: the page state comes into the next step; older page states shrink to their action in memory and requests', async () => {
    const llm = scriptedLlm([
      {
        toolCalls: [
          { name: 'browser_use', arguments: { action: 'go_to_url', url: `${h.site.url}/travel/index.html` } },
        ],
      },
      (request) => ({
        toolCalls: [
          {
            name: 'browser_use',
            arguments: {
              action: 'click_element',
              ref: refIn(String(request.messages.findLast((m) => m.role === 'tool')?.content), 'Nara: deer'),
            },
          },
        ],
      }),
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'find', text: 'yen' } }] },
      { toolCalls: [{ name: 'browser_use', arguments: { action: 'scroll_down' } }] },
      { content: 'Tōdai-ji costs 800 yen.' },
    ]);
    const agent = createBrowserAgent(h.options());
    const outcome = await run(agent, 'What does Tōdai-ji cost?', { llm });
    expect(outcome.answer).toBe('Tōdai-ji costs 800 yen.');
    // Before the browser is used, there is no page state; the prompt is always the agent's own.
    expect(pageState(llm, 0)).toBe('undefined');
    expect(lastPrompt(llm, 0)).toBe(browserNextStepPrompt);
    expect(pageState(llm, 1)).toMatch(
      /^The browser now, before this step:\n<page_content untrusted="true">\nURL: http:\/\/127\.0\.0\.1:\d+\/travel\/index\.html {3}Title: Kansai Travel/,
    );
    expect(lastPrompt(llm, 1)).toBe(browserNextStepPrompt);
    expect(pageState(llm, 2)).toContain('Title: Nara');
    const left = '[the page state after this action is left out: the current one follows while the browser is in use]';
    const toolLines = (messages: readonly Message[] | undefined) =>
      (messages ?? [])
        .filter((message) => message.role === 'tool' && !isPageState(message))
        .map((message) => message.content.split('\n'));
    // Page states come only with the context: each result is what its action did and the page it left.
    const tab = expect.stringMatching(/^The tab was then on http:\/\/127\.0\.0\.1:\d+\/travel\//);
    expect(toolLines(llm.requests[2]?.messages)).toEqual([
      [expect.stringMatching(/^Navigated to http:\/\/127.*\/travel\/index\.html\.$/), tab, left],
      [expect.stringMatching(/^Clicked link "Nara: deer and the Great Buddha"/), tab, left],
    ]);
    // find's lines are no page state: they stay whole.
    const fourth = toolLines(llm.requests[3]?.messages);
    expect(fourth[2]?.join('\n')).toContain('800 yen');
    // The history keeps no page state: a long run does not grow by one per step, and it only grows at its end.
    const memory = toolLines(outcome.state.messages);
    expect(memory).toEqual([
      [expect.stringMatching(/^Navigated to /), tab, left],
      [expect.stringMatching(/^Clicked link "Nara: deer and the Great Buddha"/), tab, left],
      fourth[2],
      [expect.stringMatching(/^Scrolled down by \d+ pixels\.$/), tab, left],
    ]);
    expect(toolLines(llm.requests[4]?.messages)).toEqual(memory);
    llm.assertConsumed();
  });

  it('Manus with a browser: the page (and, with vision, a screenshot) while browsing; the normal prompt after', async () => {
    const workspace = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-browser-manus-')));
    try {
      const view = { name: 'str_replace_editor', arguments: { command: 'view', path: workspace } };
      const llm = scriptedLlm([
        { toolCalls: [{ name: 'browser_use', arguments: { action: 'go_to_url', url: `${h.site.url}/page2.html` } }] },
        { toolCalls: [view] },
        { toolCalls: [view] },
        { content: 'Done.' },
      ]);
      const manus = withBrowser(createManus({ workspace }), h.options({ vision: true }));
      expect(manus.tools.map((tool) => tool.spec.name)).toContain('browser_use');
      const outcome = await run(manus, 'Look at page two, then at the workspace.', { llm });
      expect(outcome.answer).toBe('Done.');
      expect(pageState(llm, 1)).toMatch(
        /^The browser now, before this step:\n<page_content untrusted="true">\nURL: .*Title: Page Two/,
      );
      expect(lastPrompt(llm, 1)).toBe(manusNextStepPrompt);
      const screenshot = llm.requests[1]?.messages.find((message) => isPageState(message));
      expect(screenshot).toMatchObject({ image: { mimeType: 'image/jpeg' } });
      // The tool's own results carry no image: vision goes with the context, once a step.
      expect(lastObservation(llm, 1)).toMatch(/^Navigated to /);
      expect(
        llm.requests[1]?.messages.some(
          (message) => message.role === 'tool' && !isPageState(message) && 'image' in message && message.image,
        ),
      ).toBe(false);
      // Two steps without the browser: the prompt is Manus's own again, and no screenshot is sent.
      expect(lastPrompt(llm, 3)).toBe(manusNextStepPrompt);
      expect(pageState(llm, 3)).toBe('undefined');
      expect(llm.requests[3]?.messages.some((message) => 'image' in message && message.image)).toBe(false);
      llm.assertConsumed();
    } finally {
      await rm(workspace, { recursive: true, force: true });
    }
  });
});
