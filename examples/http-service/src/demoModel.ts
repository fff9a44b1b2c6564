import { readFile } from 'node:fs/promises';
import {
  type OpenAiServer,
  type RecordedRequest,
  type ScriptedAnswer,
  startOpenAiServer,
} from '@openmanus/core/testing';

/** The task the demo transcript answers (the page offers it). */
export const DEMO_TASK = 'Find the prime numbers below 50 and their sum with Python. Plan the work first.';

const transcriptFile = new URL('../demo/transcript.json', import.meta.url);

const scriptedFollowUp = (text: string): ScriptedAnswer => ({
  content:
    `This is the scripted demo model: it replays one recorded run, so it cannot answer "${text}". ` +
    'Start the service with a model configured (OPENAI_API_KEY, OPENAI_BASE_URL or config/config.toml) to talk to a live one.',
  toolCalls: [{ name: 'terminate', arguments: { status: 'failure' } }],
});

/**
 * The reply for a request, from where the conversation is: the transcript's next reply in the
 * first task (whatever the task says), a note that it is scripted for every later message. A
 * request ends with the agent's next-step prompt; the user messages before it are the tasks.
 */
export function demoReply(transcript: readonly ScriptedAnswer[], request: RecordedRequest): ScriptedAnswer {
  const messages = request.messages.slice(0, -1);
  const tasks = messages.flatMap((m, index) => (m.role === 'user' ? [index] : []));
  const last = tasks.at(-1) ?? 0;
  const turn = messages.slice(last).filter((m) => m.role === 'assistant').length;
  const reply = tasks.length === 1 ? transcript[turn] : undefined;
  return reply ?? scriptedFollowUp(String(messages[last]?.content ?? ''));
}

/**
 * A local OpenAI-compatible server (core's test server, on 127.0.0.1) replaying the recorded
 * demo run for every run started, so the service can be tried with no model and no key.
 */
export async function startDemoModel(): Promise<OpenAiServer> {
  const transcript = JSON.parse(await readFile(transcriptFile, 'utf8')) as ScriptedAnswer[];
  return startOpenAiServer({ script: (request) => demoReply(transcript, request) });
}
