// An agent run end to end: a scripted model (over HTTP, through the real openai SDK) browses the
// local travel site in a real Chromium, extracts facts with extract_content (whose model call is
// scripted too) and writes them to a file with str_replace_editor; no browser is left afterwards.
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent, createOpenAiLlm, createStrReplaceEditor, defaultPolicies, run, terminate } from '@openmanus/core';
import { processesMatching, type RecordedRequest, startOpenAiServer } from '@openmanus/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBrowserUse } from '../src/browserUse.js';
import { chromePath, refIn, testResolver } from './harness.js';
import { type Site, startSite } from './site.js';

const chrome = chromePath();

/** The last observation the model was sent. */
const lastObservation = (request: RecordedRequest) =>
  String(request.messages.findLast((message) => message.role === 'tool')?.content ?? '');

const FACTS = 'Kinkaku-ji: 9:00–17:00, 500 yen. Ryoan-ji: from 8:00, 600 yen. Fushimi Inari: always open, free.';

describe.skipIf(!chrome)('an agent with browser_use', () => {
  let site: Site;
  let workspace: string;
  beforeAll(async () => {
    site = await startSite();
    workspace = await realpath(await mkdtemp(join(tmpdir(), 'openmanus-browser-agent-')));
  });
  afterAll(async () => {
    await site.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it('browses a local site, extracts facts and writes them to a file', async () => {
    const marker = `agent-${process.pid}-${Date.now()}`;
    const report = join(workspace, 'kyoto-facts.md');
    const model = await startOpenAiServer({
      script: [
        {
          toolCalls: [
            { name: 'browser_use', arguments: { action: 'go_to_url', url: `${site.url}/travel/index.html` } },
          ],
        },
        (request) => ({
          toolCalls: [
            {
              name: 'browser_use',
              arguments: { action: 'click_element', ref: refIn(lastObservation(request), 'Kyoto: temples') },
            },
          ],
        }),
        {
          toolCalls: [
            { name: 'browser_use', arguments: { action: 'extract_content', goal: 'opening hours and entry prices' } },
          ],
        },
        // extract_content's own call of the model.
        { toolCalls: [{ name: 'extract_content', arguments: { extracted_content: FACTS } }] },
        {
          toolCalls: [
            {
              name: 'str_replace_editor',
              arguments: { command: 'create', path: report, file_text: `# Kyoto temples\n\n${FACTS}\n` },
            },
          ],
        },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const agent = createAgent({
        name: 'researcher',
        systemPrompt: 'Research with the browser and write what you find into the workspace.',
        tools: [
          createBrowserUse({
            allowHosts: [site.host],
            resolve: testResolver,
            extraChromiumArgs: [`--openmanus-test-marker=${marker}`],
          }),
          createStrReplaceEditor({ workspace }),
          terminate,
        ],
        policies: defaultPolicies({ maxSteps: 10 }),
      });
      const llm = createOpenAiLlm({ model: 'scripted-model', apiKey: 'test-key', baseURL: model.baseURL });
      const result = await run(
        agent,
        'Find the opening hours and prices of Kyoto temples; write them to kyoto-facts.md.',
        {
          llm,
          workspace,
        },
      );

      expect(result.finishReason).toBe('terminated');
      // Every request the model server answered counts once in the run's usage, extract_content's too.
      expect(result.state.usage.llmCalls).toBe(model.requests.length);
      expect(await readFile(report, 'utf8')).toBe(`# Kyoto temples\n\n${FACTS}\n`);
      const [, clicked, extracted, extraction, written] = model.requests;
      expect(lastObservation(clicked as RecordedRequest)).toContain('link "Kyoto: temples and gardens"');
      expect(lastObservation(extracted as RecordedRequest)).toMatch(
        /^Clicked link "Kyoto: temples and gardens" \[ref=e\d+\]\./,
      );
      expect(lastObservation(extracted as RecordedRequest)).toContain('Title: Kyoto: temples and gardens   (HTTP 200)');
      // The extraction call: one forced function, the page's main content as Markdown.
      expect(extraction?.tool_choice).toBe('required');
      expect(extraction?.tools).toEqual([
        expect.objectContaining({ function: expect.objectContaining({ name: 'extract_content' }) }),
      ]);
      const prompt = String(extraction?.messages.findLast((message) => message.role === 'user')?.content);
      expect(prompt).toContain('Goal: opening hours and entry prices');
      expect(prompt).toContain(
        'The Golden Pavilion opens at 9:00 and closes at 17:00. Entry costs 500 yen for adults.',
      );
      expect(lastObservation(written as RecordedRequest)).toContain(FACTS);
      model.assertConsumed();
      // The run ended: its browser is gone.
      const end = Date.now() + 5000;
      while (processesMatching(`--openmanus-test-marker=${marker}`).length > 0 && Date.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(processesMatching(`--openmanus-test-marker=${marker}`)).toEqual([]);
    } finally {
      await model.close();
    }
  });
});
