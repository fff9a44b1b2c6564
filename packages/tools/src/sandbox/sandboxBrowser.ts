// OpenManus's sandbox_browser: a browser inside the run's sandbox, driven through the browser
// automation service of OpenManus's sandbox image (an HTTP API on port 8003 in the sandbox). Each
// action is one request made from inside the sandbox with curl; the answer's page state goes to
// the model, its screenshot attached as an image.
import { defineTool, err, type SandboxProvider, sandboxFor, type ToolReturn } from '@openmanus/core';
import { z } from 'zod';
import { DEFAULT_IMAGE_LIMITS, imageForModel } from './imageForModel.js';

export interface SandboxBrowserOptions {
  /** The sandbox the browser runs in when the run has none of its own. */
  readonly sandboxProvider?: SandboxProvider;
  /** The automation service as seen from inside the sandbox (default `http://localhost:8003`). */
  readonly apiUrl?: string;
  /** Longest one action may take, in ms (default 30 000, as OpenManus). */
  readonly timeoutMs?: number;
}

const ACTIONS = [
  'navigate_to',
  'go_back',
  'wait',
  'click_element',
  'input_text',
  'send_keys',
  'switch_tab',
  'close_tab',
  'scroll_down',
  'scroll_up',
  'scroll_to_text',
  'get_dropdown_options',
  'select_dropdown_option',
  'click_coordinates',
  'drag_drop',
] as const;
type Action = (typeof ACTIONS)[number];
type Args = { readonly action: Action } & Partial<Record<Exclude<keyof typeof fields, 'action'>, string | number>>;

const fields = {
  action: z.enum(ACTIONS).describe('The browser action to perform'),
  url: z.string().optional().describe("URL for 'navigate_to'"),
  index: z.number().int().optional().describe('Element index for interaction actions (the [n] of the page state)'),
  text: z.string().optional().describe('Text for input_text, scroll_to_text and select_dropdown_option'),
  amount: z.number().int().optional().describe('Pixels to scroll (default: one page)'),
  page_id: z.number().int().optional().describe('Tab id for switch_tab and close_tab'),
  keys: z.string().optional().describe("Keys for send_keys (e.g. 'Enter', 'Control+a')"),
  seconds: z.number().int().optional().describe('Seconds to wait (default 3)'),
  x: z.number().int().optional().describe('X coordinate for click_coordinates'),
  y: z.number().int().optional().describe('Y coordinate for click_coordinates'),
  element_source: z.string().optional().describe('Source element for drag_drop'),
  element_target: z.string().optional().describe('Target element for drag_drop'),
};

/** What each action needs, as OpenManus's schema lists them; an action missing one is refused before anything runs. */
const NEEDS: Partial<Record<Action, readonly (keyof Args)[]>> = {
  navigate_to: ['url'],
  click_element: ['index'],
  input_text: ['index', 'text'],
  send_keys: ['keys'],
  switch_tab: ['page_id'],
  close_tab: ['page_id'],
  scroll_to_text: ['text'],
  get_dropdown_options: ['index'],
  select_dropdown_option: ['index', 'text'],
  click_coordinates: ['x', 'y'],
  drag_drop: ['element_source', 'element_target'],
};
/** What each action sends besides its needs (optional parameters). */
const MAY: Partial<Record<Action, readonly (keyof Args)[]>> = {
  scroll_down: ['amount'],
  scroll_up: ['amount'],
};

/** Room for a screenshot of OpenManus's limit (10 MB) in base64, and the page state. */
const MAX_ANSWER_BYTES = 16 * 2 ** 20;

/** The page state fields the model is told, as OpenManus passes them on. */
const STATE_FIELDS = ['url', 'title', 'element_count', 'pixels_below', 'ocr_text', 'image_url'] as const;

export function createSandboxBrowser(options: SandboxBrowserOptions = {}) {
  const apiUrl = (options.apiUrl ?? 'http://localhost:8003').replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  return defineTool({
    name: 'sandbox_browser',
    description: [
      'A browser inside the sandbox: navigate to a URL or go back, click elements by their [index] in the',
      'page state, type text, send keys, scroll, switch or close tabs, read and choose dropdown options. The',
      'session stays open between calls. Each call answers with the page (URL, title, elements) and a',
      'screenshot.',
    ].join(' '),
    parameters: z.object(fields),
    execute: async (args, scope) => {
      const missing = (NEEDS[args.action] ?? []).filter((name) => args[name] === undefined || args[name] === '');
      if (missing.length > 0) return err(`${args.action} needs ${missing.join(' and ')}.`);
      const open = sandboxFor(scope, options.sandboxProvider);
      if (!open) return err('sandbox_browser drives the browser in the run’s sandbox, and this run has none.');
      const sandbox = await open();
      const endpoint = `${apiUrl}/api/automation/${args.action}`;
      // The parameters go on curl's stdin as JSON: no shell ever sees them (OpenManus pasted them
      // into a shell command in single quotes, which a quote in the text broke out of).
      const result = await sandbox.exec(
        ['curl', '-sS', '-X', 'POST', endpoint, '-H', 'Content-Type: application/json', '--data-binary', '@-'],
        { stdin: JSON.stringify(paramsOf(args)), timeoutMs, signal: scope.signal, maxOutputBytes: MAX_ANSWER_BYTES },
      );
      if (result.timedOut)
        return err(`The browser action ${args.action} took longer than ${timeoutMs} ms and was stopped.`);
      if (result.droppedBytes > 0)
        return err(
          `The sandbox's browser service answered more than ${MAX_ANSWER_BYTES / 2 ** 20} MiB; nothing of it was used.`,
        );
      if (result.exitCode !== 0) {
        const why = result.stderr.trim() || `curl exited with ${result.exitCode ?? result.signal}`;
        return err(
          `The sandbox's browser service at ${apiUrl} did not answer (${why}). It comes with OpenManus's ` +
            'sandbox image (sandbox_image_name); a sandbox of another image has no browser.',
        );
      }
      return answerOf(result.stdout);
    },
  });
}

/** The request body: the action's parameters, `wait` 3 seconds unless told. */
function paramsOf(args: Args): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const name of [...(NEEDS[args.action] ?? []), ...(MAY[args.action] ?? [])])
    if (args[name] !== undefined) params[name] = args[name];
  if (args.action === 'wait') params.seconds = args.seconds ?? 3;
  return params;
}

/** The service's answer: its page state as text, its screenshot as the image, a failure as an error. */
async function answerOf(body: string): Promise<ToolReturn> {
  let answer: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    answer = parsed as Record<string, unknown>;
  } catch {
    return err(`The sandbox's browser service answered something other than a JSON object: ${body.slice(0, 200)}`);
  }
  const state: Record<string, unknown> = {
    success: answer.success === true,
    message: typeof answer.message === 'string' ? answer.message : 'Browser action completed',
  };
  for (const field of STATE_FIELDS) if (answer[field] !== undefined) state[field] = answer[field];
  const screenshot = typeof answer.screenshot_base64 === 'string' ? answer.screenshot_base64 : undefined;
  const image = screenshot ? await screenshotOf(screenshot) : undefined;
  if (image && 'error' in image) state.image_validation_error = image.error;
  const output = JSON.stringify(state, null, 2);
  // A failed action still shows the page it left.
  const shown = image && 'image' in image ? { image: image.image } : {};
  return state.success === true ? { output, ...shown } : { output, isError: true, ...shown };
}

/** A screenshot checked and scaled as sandbox_vision's images are; a bad one is named, not sent. */
async function screenshotOf(base64: string) {
  const data = base64.startsWith('data:') ? base64.slice(base64.indexOf(',') + 1) : base64;
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(data) || data.length % 4 !== 0) return { error: 'the screenshot is not base64' };
  const image = await imageForModel(Buffer.from(data, 'base64'), DEFAULT_IMAGE_LIMITS);
  return image.isOk() ? { image: image.value.image } : { error: `the screenshot: ${image.error}` };
}
