import { err, type JsonSchema, ok, type Result } from '@openmanus/core';
import { z } from 'zod';

/** An element reference from the page state: `e12`, or `f1e3` inside a frame. */
export const REF_PATTERN = /^(f\d+)?e\d+$/;

/** Each parameter, described once: the model sees one flat schema, each action takes the ones it needs. */
const param = {
  url: z.string().trim().min(1).describe('go_to_url, open_tab: the http(s) URL to open.'),
  ref: z
    .string()
    .trim()
    .regex(REF_PATTERN, { error: 'expected a ref from the page state, such as e12 or f1e3' })
    .describe('The element to act on, by its ref in the page state (e.g. e12, or f1e3 inside a frame).'),
  text: z
    .string()
    .describe(
      'input_text: the text to type; select_dropdown_option: the option to choose; scroll_to_text: the text to ' +
        'scroll to; find: the text (or pattern) to look for; wait: text to wait for.',
    ),
  submit: z.boolean().describe('input_text: press Enter after typing.'),
  slowly: z.boolean().describe('input_text: type key by key (for fields that react to each key).'),
  scroll_amount: z.number().int().positive().describe('scroll_down, scroll_up: pixels to scroll (default one screen).'),
  tab_id: z
    .number()
    .int()
    .min(0)
    .describe('switch_tab, close_tab: the tab id from the state (close_tab: default the current tab).'),
  query: z.string().trim().min(1).describe('web_search: what to search for; the first result is opened.'),
  goal: z.string().trim().min(1).describe('extract_content: what to extract from the page.'),
  start_from_char: z
    .number()
    .int()
    .min(0)
    .describe('extract_content: where to continue a long page (the offset the previous call gave).'),
  keys: z
    .string()
    .trim()
    .min(1)
    .describe('send_keys: keys to press, e.g. "Enter", "Escape", "Control+a"; several separated by spaces.'),
  seconds: z
    .number()
    .min(0)
    .max(60)
    .describe('wait: seconds to wait (default 3; with text or text_gone: at most this long).'),
  text_gone: z.string().min(1).describe('wait: text to wait to disappear.'),
  regex: z.boolean().describe('find: text is a regular expression.'),
  accept: z.boolean().describe('handle_dialog: true to accept (OK), false to dismiss (Cancel).'),
  prompt_text: z.string().describe('handle_dialog: the answer to a prompt() dialog.'),
  path: z
    .string()
    .trim()
    .min(1)
    .describe('upload_file: the file in the workspace to upload (relative to it, or absolute inside it).'),
  full_page: z.boolean().describe('screenshot: the whole page instead of the viewport.'),
  double: z.boolean().describe('click_element: a double click.'),
} as const;

const action = <A extends string, S extends z.ZodRawShape>(name: A, shape: S) =>
  z.object({ action: z.literal(name), ...shape });

/** Every action with the parameters it takes. */
const ACTION_SCHEMAS = [
  action('go_to_url', { url: param.url }),
  action('click_element', { ref: param.ref, double: param.double.optional() }),
  action('input_text', {
    ref: param.ref,
    text: param.text,
    submit: param.submit.optional(),
    slowly: param.slowly.optional(),
  }),
  action('scroll_down', { scroll_amount: param.scroll_amount.optional(), ref: param.ref.optional() }),
  action('scroll_up', { scroll_amount: param.scroll_amount.optional(), ref: param.ref.optional() }),
  action('scroll_to_text', { text: param.text.min(1) }),
  action('send_keys', { keys: param.keys }),
  action('get_dropdown_options', { ref: param.ref }),
  action('select_dropdown_option', { ref: param.ref, text: param.text.min(1) }),
  action('go_back', {}),
  action('refresh', {}),
  action('web_search', { query: param.query }),
  action('wait', {
    seconds: param.seconds.optional(),
    text: param.text.min(1).optional(),
    text_gone: param.text_gone.optional(),
  }),
  action('extract_content', { goal: param.goal, start_from_char: param.start_from_char.optional() }),
  action('switch_tab', { tab_id: param.tab_id }),
  action('open_tab', { url: param.url }),
  action('close_tab', { tab_id: param.tab_id.optional() }),
  action('get_current_state', {}),
  action('find', { text: param.text.min(1), regex: param.regex.optional() }),
  action('hover', { ref: param.ref }),
  action('handle_dialog', { accept: param.accept, prompt_text: param.prompt_text.optional() }),
  action('upload_file', { ref: param.ref, path: param.path }),
  action('screenshot', { full_page: param.full_page.optional(), ref: param.ref.optional() }),
] as const;

export type BrowserAction = z.output<(typeof ACTION_SCHEMAS)[number]>;
export type ActionName = BrowserAction['action'];
export type ActionArgs<A extends ActionName> = Extract<BrowserAction, { action: A }>;

export const ACTION_NAMES = ACTION_SCHEMAS.map((schema) => schema.shape.action.value) as ActionName[];

const byName = new Map<string, z.ZodObject>(ACTION_SCHEMAS.map((schema) => [schema.shape.action.value, schema]));

/** The schema the model sees: `action`, plus every parameter, optional (each action's own are checked on the call). */
export const browserUseParameters: JsonSchema = (() => {
  const optional = Object.fromEntries(Object.entries(param).map(([name, schema]) => [name, schema.optional()]));
  const { $schema: _dialect, ...schema } = z.toJSONSchema(
    z.object({
      action: z.enum(ACTION_NAMES as [ActionName, ...ActionName[]]).describe('The action to take.'),
      ...optional,
    }),
    { io: 'input' },
  ) as Record<string, unknown>;
  return schema;
})();

/**
 * The call checked against its action's parameters. A missing or wrong parameter is an error that
 * names the action and the parameter; an integer `index` (OpenManus's) is pointed to `ref`.
 */
export function parseAction(args: unknown): Result<BrowserAction, string> {
  if (typeof args !== 'object' || args === null) return err('browser_use takes an object with an action');
  const given = args as Record<string, unknown>;
  const name = given.action;
  const schema = typeof name === 'string' ? byName.get(name) : undefined;
  if (!schema) {
    const which = name === undefined ? 'No action given' : `Unknown action ${JSON.stringify(name)}`;
    return err(`${which}: use one of ${ACTION_NAMES.join(', ')}.`);
  }
  if ('ref' in schema.shape && given.ref === undefined && given.index !== undefined) {
    return err(`${name} takes ref (the element's ref from the page state, such as e12), not index.`);
  }
  // Parameters an action does not take are ignored, as models often send them all (null included).
  const own = Object.fromEntries(Object.entries(given).filter(([key, value]) => key in schema.shape && value !== null));
  const parsed = schema.safeParse(own);
  if (parsed.success) return ok(parsed.data as BrowserAction);
  const problems = parsed.error.issues.map((issue) => {
    const key = String(issue.path[0] ?? '');
    return own[key] === undefined ? `${key} is required` : `${key}: ${issue.message}`;
  });
  return err(`${name}: ${problems.join('; ')}.`);
}
