// What the flow says to the model and to its executors (OpenManus's prompts, reworded).
import type { LlmRequest, Message, ToolSpec } from '@openmanus/core/kernel';
import type { BlockedStep, ExecutorInfo, FlowConfig } from './flowState.js';
import { type Plan, renderPlan } from './plans.js';

const PLANNER =
  'You are a planning assistant. Make a concise plan of clear, actionable steps for the task, ' +
  'at the level of milestones rather than small sub-steps, and record it with the planning tool.';

/** The agents list the planner reads when several agents take steps, and how to label a step for one. */
function agentsNote(executors: readonly ExecutorInfo[]): string {
  const lines = executors.map((agent) => `- ${agent.key.toUpperCase()}: ${agent.description || agent.name}`);
  return [
    'These agents carry out the steps:',
    ...lines,
    'Start each step with the agent that should do it, in brackets: for example "[' +
      (executors[0]?.key.toUpperCase() ?? 'AGENT') +
      '] Collect the figures".',
  ].join('\n');
}

const executorsOf = (config: FlowConfig) =>
  config.executors.flatMap((key) => config.agents.filter((agent) => agent.key === key));

function planningRequest(config: FlowConfig, messages: readonly Message[], tools: readonly ToolSpec[]): LlmRequest {
  // Only the planning tool, and it must be called: the answer is a plan or it is nothing.
  return { messages, tools, toolChoice: 'required', ...(config.profile ? { profile: config.profile } : {}) };
}

/** The request that makes the plan. */
export function planRequest(config: FlowConfig, input: string, planId: string): LlmRequest {
  const executors = executorsOf(config);
  const system = executors.length > 1 ? `${PLANNER}\n\n${agentsNote(executors)}` : PLANNER;
  return planningRequest(
    config,
    [
      { role: 'system', content: system },
      {
        role: 'user',
        content: `Make a plan with clear steps for this task, as plan "${planId}" (command "create"):\n\n${input}`,
      },
    ],
    [config.planningTool],
  );
}

/** The request that changes the plan after a step was blocked. */
export function replanRequest(config: FlowConfig, input: string, plan: Plan, blocked: BlockedStep): LlmRequest {
  const executors = executorsOf(config);
  const system = executors.length > 1 ? `${PLANNER}\n\n${agentsNote(executors)}` : PLANNER;
  return planningRequest(
    config,
    [
      { role: 'system', content: system },
      {
        role: 'user',
        content: [
          `The task: ${input}`,
          '',
          renderPlan(plan),
          '',
          `Step ${blocked.index} could not be done: ${blocked.reason}`,
          '',
          `Change plan "${plan.id}" with the "update" command so that the task can still be done: replace or add the ` +
            'steps still to do. Steps that keep their text and place keep their status.',
        ].join('\n'),
      },
    ],
    [config.planningTool],
  );
}

/** What an executor is asked to do for one step. */
export function stepPrompt(plan: Plan, index: number, failure?: string): string {
  const step = plan.steps[index];
  return [
    'The plan so far:',
    renderPlan(plan),
    '',
    `Your task now is step ${index}: "${step?.text ?? ''}".`,
    ...(failure ? ['', `An earlier attempt at this step failed: ${failure}. Try another way.`] : []),
    '',
    'Do only this step, with the tools you have. When it is done, say briefly what you did and what you found.',
  ].join('\n');
}

/** Each step's result, cut so that the summary request stays small however long the steps' answers. */
const RESULT_CHARS = 2000;
const cut = (text: string) => (text.length > RESULT_CHARS ? `${text.slice(0, RESULT_CHARS)} […cut]` : text);

function summaryPrompt(plan: Plan, results: readonly string[]): string {
  return [
    'The plan is done. Its final state:',
    '',
    renderPlan(plan),
    '',
    'What each step reported:',
    ...results.map((result, index) => `--- ${index + 1} ---\n${cut(result)}`),
    '',
    'Sum up what was accomplished, and add any closing remarks.',
  ].join('\n');
}

/** The request for the closing summary (no tools: the answer is text). */
export function summaryRequest(config: FlowConfig, plan: Plan, results: readonly string[]): LlmRequest {
  return {
    messages: [
      { role: 'system', content: 'You are a planning assistant. Summarise the finished plan.' },
      { role: 'user', content: summaryPrompt(plan, results) },
    ],
    tools: [],
    toolChoice: 'none',
    ...(config.profile ? { profile: config.profile } : {}),
  };
}

/** What the primary agent is asked when the flow's model could not write the summary. */
export const agentSummaryPrompt = summaryPrompt;

/** The plan OpenManus falls back to when the model makes none. */
export function fallbackPlan(id: string, input: string): Plan {
  const title = `Plan for: ${input.length > 50 ? `${input.slice(0, 50)}...` : input}`;
  const steps = ['Analyze request', 'Execute task', 'Verify results'];
  return { id, title, steps: steps.map((text) => ({ text, status: 'not_started', notes: '' })) };
}
