// The studio: the runs a server holds, a run's timeline (model calls, tool calls, approvals), its
// state at any transition, and time travel (fork, replay). Plain ES modules, no build step.
// The token comes in the address's fragment (never sent to a server), is kept for this tab only
// and goes out as a header. Everything a run says is put in as text, never as markup.

import { argumentsView } from './args.js';
import { $, button, costText, count, durationText, el, h, isFinal, oneLine, shareText, tokensText } from './dom.js';
import { diffList, jsonTree } from './tree.js';

const token = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given) sessionStorage.setItem('openmanus-studio-token', given);
  return given ?? sessionStorage.getItem('openmanus-studio-token');
})();

/** The API is the directory above `studio/` (the server may be mounted under a prefix). */
const BASE = location.pathname.replace(/studio(\/[^/]*)?$/, '');

async function api(method, path, body) {
  const res = await fetch(`${BASE}${path.replace(/^\//, '')}`, {
    method,
    credentials: 'same-origin',
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error ?? `${res.status} ${res.statusText}`);
  return json;
}

const runPath = (id, rest = '') => `runs/${encodeURIComponent(id)}${rest}`;

function fail(error) {
  $('failure').textContent = error?.message ?? String(error);
  $('failure').hidden = false;
}

/** What the page shows; the server holds the truth, this is a copy refreshed from it. */
const studio = {
  agents: [],
  models: [],
  runs: [],
  /** How many pages of the runs list are shown (the server sends one page at a time). */
  runPages: 1,
  /** The run open: its id, view (`GET /runs/:id`) and trace. */
  run: undefined,
  /** Model call details fetched (by run and effect id), and which entries are open. */
  requests: new Map(),
  open: new Set(),
  /** The transition whose state is shown. */
  inspected: undefined,
  compare: undefined,
  divergence: undefined,
  /** What has been typed into a pending entry's answer or reason, kept across the re-renders live updates make. */
  drafts: new Map(),
};

// ---------------------------------------------------------------- runs list

async function loadAgents() {
  const { agents, models } = await api('GET', 'agents');
  studio.agents = agents;
  studio.models = models ?? [];
  const names = agents.map((a) => a.name);
  $('new-agent').replaceChildren(...names.map((name) => el('option', name)));
  $('filter-agent').replaceChildren(el('option', 'any agent'), ...names.map((name) => el('option', name)));
  $('filter-agent').firstElementChild.value = '';
}

async function refreshRuns() {
  const query = new URLSearchParams();
  if ($('filter-agent').value) query.set('agent', $('filter-agent').value);
  if ($('filter-status').value) query.set('status', $('filter-status').value);
  if ($('filter-text').value.trim()) query.set('q', $('filter-text').value.trim());
  const runs = [];
  let page = { next: 0 };
  for (let loaded = 0; loaded < studio.runPages && page.next !== undefined; loaded++) {
    if (page.next > 0) query.set('offset', String(page.next));
    page = await api('GET', `runs${query.size ? `?${query}` : ''}`);
    runs.push(...page.runs);
  }
  const { quarantined } = page;
  studio.runs = runs;
  $('more-runs').hidden = page.next === undefined;
  const focused = document.activeElement?.closest?.('#runs li')?.dataset.id;
  $('runs').replaceChildren(...runs.map(runRow));
  $('run-count').textContent = `(${runs.length}${page.next === undefined ? '' : '+'})`;
  $('quarantined').hidden = !quarantined?.length;
  $('quarantined').textContent = quarantined?.length ? `${quarantined.length} damaged runs set aside` : '';
  if (focused)
    $('runs')
      .querySelector(`li[data-id="${CSS.escape(focused)}"]`)
      ?.focus();
}

function runRow(run) {
  const li = el('li', undefined, 'entry run-row');
  li.tabIndex = -1;
  li.dataset.id = run.id;
  li.dataset.status = run.status;
  if (run.id === studio.run?.id) li.classList.add('selected');
  const usage = run.usage ?? {};
  const tokens = (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
  li.append(
    h(
      'div',
      'run-head',
      el('span', run.status, `badge status-${run.status}`),
      el('span', oneLine(run.task ?? run.id, 90), 'run-task'),
    ),
    h(
      'div',
      'run-meta muted',
      el('span', run.agent, 'agent'),
      el('span', run.model ?? 'model —', 'model'),
      el('span', `${count(run.step)} steps`, 'steps'),
      el('span', `${count(tokens)} tokens`, 'tokens'),
      el('span', shareText(run.cachedShare), 'cached'),
      el('span', costText(run.costUsd), 'cost'),
      el('span', durationText(run.durationMs), 'duration'),
      run.forkedFrom ? el('span', `fork of #${run.forkedFrom.transition}`, 'fork-mark') : undefined,
    ),
  );
  li.addEventListener('click', () => go({ run: run.id }));
  return li;
}

// ---------------------------------------------------------------- a run

async function fetchRun(id) {
  const [view, trace] = await Promise.all([api('GET', runPath(id)), api('GET', runPath(id, '/trace'))]);
  return { id, view, trace };
}

async function refreshRun() {
  const id = studio.run?.id;
  if (!id) return;
  const loaded = await fetchRun(id);
  if (studio.run?.id !== id) return;
  studio.run = { ...studio.run, ...loaded };
  renderRun();
  if (studio.compare) await refreshCompare();
}

async function openRun(id) {
  if (studio.run?.id !== id) {
    studio.open.clear();
    studio.divergence = undefined;
    // A replay form filled in for another run (another agent's tools, maybe) is not this one's.
    $('replay-form').hidden = true;
    closeInspector();
  }
  studio.run = { id, ...(await fetchRun(id)) };
  $('run-pane').hidden = false;
  renderRun();
  for (const row of $('runs').children) row.classList.toggle('selected', row.dataset.id === id);
  document.body.classList.add('run-open');
  watch(id);
}

function renderRun() {
  const { view, trace, id } = studio.run;
  const summary = trace.run;
  $('run-title').textContent = oneLine(summary.task ?? id, 100);
  $('run-pane').dataset.status = view.status;
  $('run-meta').replaceChildren(
    el('span', `${view.status}${view.finishReason ? ` (${view.finishReason})` : ''}`, `badge status-${view.status}`),
    el('span', summary.agent, 'agent'),
    el('span', summary.model ?? 'model —', 'model'),
    el('span', `step ${view.step}`, 'steps'),
    el('span', tokensText(view.usage), 'tokens'),
    el('span', shareText(summary.cachedShare), 'cached'),
    el('span', costText(view.usage?.costUsd ?? summary.costUsd), 'cost'),
    el('span', durationText(summary.durationMs), 'duration'),
  );
  const from = summary.forkedFrom;
  $('forked-from').hidden = !from;
  if (from) {
    $('forked-from').replaceChildren(
      `Forked from transition ${from.transition} of `,
      button(oneLine(from.runId, 40), 'link', () => go({ compare: [from.runId, id] })),
    );
  }
  $('cancel').hidden = isFinal(view.status);
  $('answer-box').hidden = !view.answer;
  $('answer').textContent = view.answer ?? '';
  $('run-error').hidden = !view.error;
  $('run-error').textContent = view.error ? `${view.error.message} (${view.error.code})` : '';
  const asked = view.pending.some((p) => p.kind === 'human');
  $('message-form').hidden = !isFinal(view.status);
  if (asked) $('message-form').hidden = true;
  renderReplayResult();
  // The focus stays where it was, in the field being typed in too (with its caret).
  const focused = document.activeElement;
  const focusedKey = focused?.closest?.('#timeline li.entry')?.dataset.key;
  const field = focusedKey && focused.matches('input') && focused.className ? focused : undefined;
  $('timeline').replaceChildren(...timelineEntries(studio.run, { actions: true }));
  const entry = focusedKey && $('timeline').querySelector(`li[data-key="${CSS.escape(focusedKey)}"]`);
  if (!entry) return;
  const again = field && entry.querySelector(`input.${CSS.escape(field.className)}`);
  if (again) {
    again.focus();
    again.setSelectionRange(field.selectionStart, field.selectionEnd, field.selectionDirection);
  } else entry.focus();
}

/** An input whose text outlives the entry it is in (a live update builds the entry anew). */
function draftInput(className, key) {
  const input = el('input', undefined, className);
  input.value = studio.drafts.get(key) ?? '';
  input.addEventListener('input', () => studio.drafts.set(key, input.value));
  return input;
}

/** A trace's entries in order: transitions, the model and tool calls they asked for, then what waits for a person. */
function timelineEntries(run, { actions, forkAt }) {
  const { trace, view } = run;
  const byTransition = new Map();
  const add = (n, node) => {
    const key = n ?? Number.POSITIVE_INFINITY;
    if (!byTransition.has(key)) byTransition.set(key, []);
    byTransition.get(key).push(node);
  };
  for (const call of trace.modelCalls) add(call.transition, modelCallEntry(run, call));
  for (const call of trace.toolCalls) add(call.transition, toolCallEntry(run, call));
  const entries = [];
  for (const transition of trace.transitions) {
    const row = transitionEntry(run, transition, { actions });
    if (forkAt !== undefined && transition.n > forkAt) row.classList.add('after-fork');
    entries.push(row, ...(byTransition.get(transition.n) ?? []));
    byTransition.delete(transition.n);
  }
  for (const rest of byTransition.values()) entries.push(...rest);
  for (const input of view.pending) entries.push(pendingEntry(run, input, { actions }));
  if (entries.length === 0) entries.push(el('li', 'Nothing recorded yet.', 'muted'));
  return entries;
}

function entryShell(run, key, kind) {
  const li = el('li', undefined, `entry ${kind}`);
  li.tabIndex = -1;
  li.dataset.key = key;
  li.dataset.run = run.id;
  return li;
}

function transitionEntry(run, transition, { actions }) {
  const li = entryShell(run, `t${transition.n}`, 'transition');
  li.dataset.n = String(transition.n);
  li.dataset.event = transition.event;
  if (studio.divergence?.runId === run.id && studio.divergence.transition === transition.n)
    li.classList.add('diverged');
  if (studio.inspected?.runId === run.id && studio.inspected.n === transition.n) li.classList.add('inspected');
  const head = h(
    'div',
    'transition-head',
    el('span', `#${transition.n}`, 'n'),
    el('span', transition.event, 'event'),
    el('span', `→ ${transition.status ?? ''}`, 'muted'),
    transition.step === undefined ? undefined : el('span', `step ${transition.step}`, 'muted'),
  );
  li.append(head);
  const inspect = () => inspectTransition(run.id, transition.n);
  li.addEventListener('activate', inspect);
  if (actions) {
    li.append(
      h(
        'div',
        'transition-actions',
        button('State', 'inspect', inspect),
        button('Fork from here', 'fork', () => toggleForkForm(li, run, transition.n)),
      ),
    );
  }
  return li;
}

function modelCallEntry(run, call) {
  const li = entryShell(run, `m${call.effectId}`, 'model-call');
  li.dataset.effectId = call.effectId;
  const usage = call.usage;
  li.append(
    h(
      'div',
      'entry-head',
      el('span', 'model', 'kind'),
      el('span', call.effectId, 'muted'),
      el('span', durationText(call.latencyMs), 'latency'),
      usage ? el('span', tokensText(usage), 'tokens') : undefined,
      usage ? el('span', costText(usage.costUsd), 'cost') : undefined,
    ),
  );
  if (call.reply) {
    if (call.reply.content.trim()) li.append(el('p', call.reply.content, 'reply'));
    if (call.reply.toolCalls.length)
      li.append(el('p', `asks for ${call.reply.toolCalls.map((c) => c.name).join(', ')}`, 'muted asks'));
  } else if (call.error) {
    li.append(el('p', `${call.error.message} (${call.error.code})`, 'error'));
  } else {
    li.append(el('p', 'waiting for the model…', 'muted'));
  }
  // What the model was sent: collapsed, fetched when first opened.
  const details = el('details', undefined, 'request');
  details.append(el('summary', `sent ${call.sent.messages} messages, ${call.sent.tools.length} tools`));
  const body = el('div', undefined, 'request-body');
  details.append(body);
  const key = `${run.id} ${call.effectId}`;
  details.addEventListener('toggle', () => {
    if (details.open) studio.open.add(key);
    else studio.open.delete(key);
    if (details.open) showRequest(run.id, call.effectId, body);
  });
  if (studio.open.has(key)) {
    details.open = true;
    showRequest(run.id, call.effectId, body);
  }
  li.append(details);
  li.addEventListener('activate', () => {
    details.open = !details.open;
  });
  return li;
}

async function showRequest(runId, effectId, body) {
  const key = `${runId} ${effectId}`;
  try {
    if (!studio.requests.has(key))
      studio.requests.set(key, await api('GET', runPath(runId, `/model-calls/${encodeURIComponent(effectId)}`)));
  } catch (error) {
    body.replaceChildren(el('p', error.message, 'error'));
    return;
  }
  const request = studio.requests.get(key);
  const messages = el('ol', undefined, 'messages');
  for (const message of request.messages) {
    const item = el('li', undefined, `message role-${message.role}`);
    item.dataset.role = message.role;
    item.append(
      h(
        'div',
        'message-head',
        el('span', message.role, 'role'),
        message.name ? el('span', message.name, 'muted') : undefined,
        message.toolCallId ? el('span', message.toolCallId, 'muted') : undefined,
      ),
      el('pre', message.content, 'content'),
    );
    for (const toolCall of message.toolCalls ?? [])
      item.append(
        h('div', 'message-call', el('code', toolCall.name), argumentsView(toolCall.name, toolCall.arguments)),
      );
    messages.append(item);
  }
  const tools = el('ul', undefined, 'tools-sent');
  for (const tool of request.tools)
    tools.append(h('li', undefined, el('code', tool.name), ` ${tool.description ?? ''}`));
  body.replaceChildren(
    el('h4', `Messages (${request.messages.length})`),
    messages,
    el('h4', `Tools (${request.tools.length}) · tool choice ${request.toolChoice ?? 'auto'}`),
    tools,
  );
}

function toolCallEntry(run, call, depth = 0) {
  const li = entryShell(run, `c${call.effectId}`, 'tool-call');
  li.dataset.tool = call.tool;
  li.dataset.callId = call.callId;
  li.append(
    h(
      'div',
      'entry-head',
      el('span', 'tool', 'kind'),
      el('code', call.tool, 'tool-name'),
      el('span', durationText(call.latencyMs), 'latency'),
    ),
    argumentsView(call.tool, call.args),
  );
  if (call.result !== undefined) li.append(el('pre', call.result, call.isError ? 'result failed' : 'result'));
  else li.append(el('p', 'running…', 'muted'));
  if (call.children && depth < 6) {
    const nested = el('ol', undefined, 'children');
    const items = [
      ...call.children.modelCalls.map((c) => [c.transition ?? 0, modelCallEntry(run, c)]),
      ...call.children.toolCalls.map((c) => [c.transition ?? 0, toolCallEntry(run, c, depth + 1)]),
    ].sort((a, b) => a[0] - b[0]);
    nested.append(...items.map(([, node]) => node));
    li.append(h('div', 'child-run', el('p', 'child run', 'muted'), nested));
  }
  return li;
}

function pendingEntry(run, input, { actions }) {
  const li = entryShell(run, `p${input.effectId}`, `pending pending-${input.kind}`);
  li.dataset.effectId = input.effectId;
  if (input.kind === 'approval') {
    li.append(
      h('div', 'entry-head', el('span', 'approval', 'kind'), el('code', input.tool, 'tool-name'), ' wants to run'),
      argumentsView(input.tool, input.args),
    );
    if (actions) {
      const reason = draftInput('reason', `${run.id} ${input.effectId} reason`);
      reason.placeholder = 'why not (the model is told)';
      reason.setAttribute('aria-label', 'Reason for rejecting');
      li.append(
        h(
          'div',
          'row',
          button('Approve', 'approve', () => decide(run.id, 'approve', { effectId: input.effectId })),
          reason,
          button('Reject', 'reject', () =>
            decide(run.id, 'reject', {
              effectId: input.effectId,
              ...(reason.value.trim() ? { reason: reason.value.trim() } : {}),
            }),
          ),
        ),
      );
    }
  } else {
    li.append(h('div', 'entry-head', el('span', 'question', 'kind')), el('p', input.question, 'question'));
    if (actions) {
      const form = el('form', undefined, 'row answer-form');
      const text = draftInput('answer-text', `${run.id} ${input.effectId} answer`);
      text.setAttribute('aria-label', 'Your answer');
      form.append(text, h('button', undefined, 'Answer'));
      form.addEventListener('submit', (submit) => {
        submit.preventDefault();
        if (text.value.trim()) send(run.id, text.value.trim());
      });
      li.append(form);
    }
  }
  return li;
}

async function decide(id, action, body) {
  try {
    await api('POST', runPath(id, `/${action}`), body);
    await refreshRun();
    watch(id);
  } catch (error) {
    fail(error);
  }
}

async function send(id, text) {
  try {
    await api('POST', runPath(id, '/messages'), { text });
    $('message').value = '';
    await refreshRun();
    watch(id);
  } catch (error) {
    fail(error);
  }
}

// ---------------------------------------------------------------- live updates

let watching;
let refreshTimer;

/** Refreshes from the server soon, once for a burst of events. */
function scheduleRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => {
    refreshRun().catch(fail);
    refreshRuns().catch(fail);
  }, 120);
}

/** Reads server-sent events with fetch (EventSource cannot send the token header). */
async function* serverSentEvents(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name) =>
        block
          .split('\n')
          .filter((line) => line.startsWith(`${name}:`))
          .map((line) => line.slice(name.length + 1).replace(/^ /, ''))
          .join('\n');
      const data = field('data');
      if (data) yield { id: field('id') || undefined, data: JSON.parse(data) };
    }
  }
}

/** Follows the open run's events until its leg ends or pauses; reconnects with Last-Event-ID. */
async function watch(id) {
  watching?.abort();
  const controller = new AbortController();
  watching = controller;
  let lastEventId;
  for (let attempt = 0; ; attempt++) {
    try {
      const response = await fetch(`${BASE}${runPath(id, '/events')}`, {
        credentials: 'same-origin',
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
        },
        signal: controller.signal,
      });
      if (!response.ok) throw new Error(`events: ${response.status}`);
      $('connection').textContent = 'live';
      for await (const message of serverSentEvents(response)) {
        if (message.id) lastEventId = message.id;
        scheduleRefresh();
      }
      if (watching === controller) $('connection').textContent = '';
      scheduleRefresh();
      return;
    } catch (error) {
      if (controller.signal.aborted) return;
      $('connection').textContent = `reconnecting (${error.message})…`;
      await new Promise((resolve) => setTimeout(resolve, Math.min(500 * 2 ** attempt, 5000)));
    }
  }
}

// ---------------------------------------------------------------- state, diff

async function inspectTransition(runId, n) {
  try {
    const { event, state } = await api('GET', runPath(runId, `/transitions/${n}`));
    studio.inspected = { runId, n };
    $('inspector').hidden = false;
    document.body.classList.add('inspecting');
    $('inspector-title').textContent = `Transition #${n}`;
    $('inspector').dataset.n = String(n);
    $('event-tree').replaceChildren(jsonTree(event, { openDepth: 1 }));
    $('state-tree').replaceChildren(jsonTree(state, { openDepth: 1 }));
    const transitions = studio.run?.id === runId ? studio.run.trace.transitions : [];
    $('diff-to').replaceChildren(
      ...transitions
        .filter((t) => t.n !== n)
        .map((t) => {
          const option = el('option', `#${t.n} ${t.event}`);
          option.value = String(t.n);
          return option;
        }),
    );
    const next = transitions.find((t) => t.n === n + 1);
    if (next) $('diff-to').value = String(next.n);
    $('diff').hidden = true;
    for (const row of document.querySelectorAll('#timeline li.transition'))
      row.classList.toggle('inspected', row.dataset.n === String(n));
  } catch (error) {
    fail(error);
  }
}

function closeInspector() {
  studio.inspected = undefined;
  $('inspector').hidden = true;
  document.body.classList.remove('inspecting');
  for (const row of document.querySelectorAll('#timeline li.inspected')) row.classList.remove('inspected');
}

$('diff-form').addEventListener('submit', async (submit) => {
  submit.preventDefault();
  const { runId, n } = studio.inspected ?? {};
  const to = Number($('diff-to').value);
  if (!runId || !to) return;
  try {
    const [from, till] = n < to ? [n, to] : [to, n];
    const diff = await api('GET', runPath(runId, `/diff?from=${from}&to=${till}`));
    $('diff').replaceChildren(diffList(diff));
    $('diff').hidden = false;
  } catch (error) {
    fail(error);
  }
});

// ---------------------------------------------------------------- time travel

/**
 * Fields for another model, system prompt and tool set (left as they are: not sent). A replay
 * calls no model (it feeds the recorded replies through the reducer): it gets no model field.
 */
function changeFields(agentName, { withModel = true } = {}) {
  const agent = studio.agents.find((a) => a.name === agentName);
  const model = withModel ? el('select', undefined, 'change-model') : undefined;
  if (model) {
    model.setAttribute('aria-label', 'Model');
    model.append(el('option', `same model${agent?.model ? ` (${agent.model})` : ''}`));
    model.firstElementChild.value = '';
    for (const name of studio.models) model.append(el('option', name));
  }
  const prompt = el('textarea', undefined, 'change-prompt');
  prompt.rows = 2;
  prompt.placeholder = 'system prompt (empty: the same)';
  prompt.setAttribute('aria-label', 'System prompt');
  const tools = el('fieldset', undefined, 'change-tools');
  tools.append(el('legend', 'Tools'));
  for (const name of agent?.tools ?? []) {
    const box = el('input');
    box.type = 'checkbox';
    box.checked = true;
    box.value = name;
    tools.append(h('label', 'tool-choice', box, ` ${name}`));
  }
  const fields = h(
    'div',
    'change-fields',
    model ? h('label', undefined, 'Model ', model) : undefined,
    h('label', 'wide', 'System prompt', prompt),
    tools,
  );
  const read = () => {
    const boxes = [...tools.querySelectorAll('input')];
    const kept = boxes.filter((b) => b.checked).map((b) => b.value);
    return {
      ...(model?.value ? { model: model.value } : {}),
      ...(prompt.value.trim() ? { systemPrompt: prompt.value } : {}),
      ...(kept.length < boxes.length ? { tools: kept } : {}),
    };
  };
  return { fields, read };
}

function toggleForkForm(row, run, n) {
  const existing = row.querySelector('form.fork-form');
  if (existing) return existing.remove();
  const form = el('form', undefined, 'changes fork-form');
  const { fields, read } = changeFields(run.trace.run.agent);
  form.append(
    el('p', `A new run from the state after transition ${n}:`, 'muted'),
    fields,
    h('button', 'start-fork', 'Fork'),
  );
  form.addEventListener('submit', async (submit) => {
    submit.preventDefault();
    try {
      const { id } = await api('POST', runPath(run.id, '/fork'), { transition: n, ...read() });
      await refreshRuns();
      go({ compare: [run.id, id] });
    } catch (error) {
      fail(error);
    }
  });
  row.append(form);
  form.querySelector('select')?.focus();
}

let replayChanges;
$('replay-toggle').addEventListener('click', () => {
  const form = $('replay-form');
  form.hidden = !form.hidden;
  if (!form.hidden) {
    replayChanges = changeFields(studio.run.trace.run.agent, { withModel: false });
    form.querySelector('.change-fields').replaceWith(replayChanges.fields);
  }
});

$('replay-form').addEventListener('submit', async (submit) => {
  submit.preventDefault();
  const id = studio.run.id;
  try {
    const report = await api('POST', runPath(id, '/replay'), replayChanges?.read() ?? {});
    studio.divergence = { runId: id, ...(report.diverged ?? {}), report };
    renderRun();
    $('timeline').querySelector('li.diverged')?.scrollIntoView({ block: 'center' });
  } catch (error) {
    fail(error);
  }
});

function renderReplayResult() {
  const box = $('replay-result');
  const divergence = studio.divergence?.runId === studio.run?.id ? studio.divergence : undefined;
  box.hidden = !divergence;
  if (!divergence) return;
  const { report } = divergence;
  box.dataset.diverged = report.diverged ? 'yes' : 'no';
  if (!report.diverged) {
    box.replaceChildren(el('p', `Replayed ${report.transitions} transitions: the run does not diverge.`));
    return;
  }
  // The server's first differences, recorded → replayed (`{path, before, after}` as in a diff).
  const { transition, event, reason, changes } = report.diverged;
  box.replaceChildren(
    el('p', `Diverges at transition #${transition} (${event}): ${reason}`, 'diverges'),
    ...(changes?.length ? [diffList({ changes }, 'What differs (as recorded → as replayed):')] : []),
  );
}

async function openCompare(left, right) {
  const [a, b] = await Promise.all([fetchRun(left), fetchRun(right)]);
  studio.compare = { left: a, right: b };
  studio.run = { id: right, ...b };
  $('run-pane').hidden = false;
  $('run-view').hidden = true;
  $('compare-view').hidden = false;
  document.body.classList.add('run-open', 'comparing');
  renderCompare();
  watch(right);
}

async function refreshCompare() {
  const { left, right } = studio.compare;
  const [a, b] = await Promise.all([fetchRun(left.id), fetchRun(right.id)]);
  if (!studio.compare) return;
  studio.compare = { left: a, right: b };
  renderCompare();
}

function renderCompare() {
  const { left, right } = studio.compare;
  const forkAt = right.trace.run.forkedFrom?.transition;
  const column = (run, label, options) => {
    const summary = run.trace.run;
    const list = el('ol', undefined, 'entries timeline');
    list.setAttribute('aria-label', `${label} timeline`);
    list.append(...timelineEntries(run, { actions: false, ...options }));
    return [
      h(
        'div',
        'column-head',
        el('h3', label),
        h(
          'p',
          'meta',
          el('span', run.view.status, `badge status-${run.view.status}`),
          el('span', summary.model ?? 'model —', 'model'),
          el('span', tokensText(run.view.usage), 'tokens'),
          el('span', costText(summary.costUsd), 'cost'),
        ),
        run.view.answer ? el('p', run.view.answer, 'answer') : undefined,
      ),
      list,
    ];
  };
  $('compare-left').dataset.run = left.id;
  $('compare-right').dataset.run = right.id;
  $('compare-left').replaceChildren(...column(left, 'Original', { forkAt }));
  $('compare-right').replaceChildren(...column(right, `Fork from #${forkAt ?? '?'}`, {}));
}

function closeCompare() {
  studio.compare = undefined;
  $('compare-view').hidden = true;
  $('run-view').hidden = false;
  document.body.classList.remove('comparing');
}

// ---------------------------------------------------------------- navigation

/** The address says what is shown: `#run=<id>` or `#compare=<a>,<b>` (a reload comes back to it). */
function go(place) {
  const hash = place.run
    ? `#run=${encodeURIComponent(place.run)}`
    : place.compare
      ? `#compare=${place.compare.map(encodeURIComponent).join(',')}`
      : '';
  if (location.hash !== hash) history.pushState(null, '', hash || location.pathname);
  return route();
}

async function route() {
  const params = new URLSearchParams(location.hash.slice(1));
  try {
    const compare = params.get('compare');
    if (compare) {
      const [left, right] = compare.split(',');
      return await openCompare(left, right);
    }
    closeCompare();
    const id = params.get('run');
    if (id) return await openRun(id);
    closeRun();
  } catch (error) {
    fail(error);
  }
}

function closeRun() {
  watching?.abort();
  closeInspector();
  closeCompare();
  const id = studio.run?.id;
  studio.run = undefined;
  $('run-pane').hidden = true;
  document.body.classList.remove('run-open');
  for (const row of $('runs').children) row.classList.remove('selected');
  if (id)
    $('runs')
      .querySelector(`li[data-id="${CSS.escape(id)}"]`)
      ?.focus();
}

window.addEventListener('popstate', route);

const typing = (target) => target instanceof HTMLElement && target.closest('input, textarea, select') !== null;

/** The list the keys move in: the one holding the focus, else the open run's timeline, else the runs. */
function currentList() {
  const focused = document.activeElement?.closest?.('ol.entries');
  if (focused) return focused;
  if (!$('run-pane').hidden) return $('run-view').hidden ? $('compare-right').querySelector('ol') : $('timeline');
  return $('runs');
}

function move(by) {
  const list = currentList();
  if (!list) return;
  const entries = [...list.querySelectorAll(':scope > li.entry')];
  if (entries.length === 0) return;
  const at = entries.indexOf(document.activeElement?.closest('li.entry'));
  const next = entries[at < 0 ? (by > 0 ? 0 : entries.length - 1) : Math.max(0, Math.min(entries.length - 1, at + by))];
  next.focus();
  next.scrollIntoView({ block: 'nearest' });
}

function closeInnermost() {
  if (!$('inspector').hidden) {
    const n = studio.inspected?.n;
    closeInspector();
    $('timeline').querySelector(`li[data-n="${n}"]`)?.focus();
    return;
  }
  const entry = document.activeElement?.closest?.('li.entry');
  const open = entry?.querySelector(':scope > details[open]');
  if (open) {
    open.open = false;
    return;
  }
  if (studio.compare) return go({ run: studio.compare.left.id });
  if (studio.run) go({});
}

document.addEventListener('keydown', (key) => {
  if (key.ctrlKey || key.metaKey || key.altKey) return;
  if (typing(key.target)) {
    if (key.key === 'Escape') key.target.blur();
    return;
  }
  const entry = document.activeElement?.closest?.('li.entry');
  switch (key.key) {
    case 'j':
    case 'ArrowDown':
      move(1);
      break;
    case 'k':
    case 'ArrowUp':
      move(-1);
      break;
    case 'Enter':
      // Enter on a button or summary does what it does; on an entry it opens it.
      if (!entry || document.activeElement !== entry) return;
      // A run opened from the keyboard takes the focus, so that the keys walk its timeline next
      // (Esc gives it back to the run's row).
      if (entry.classList.contains('run-row'))
        go({ run: entry.dataset.id }).then(() => {
          if (studio.run?.id === entry.dataset.id) $('timeline').querySelector(':scope > li.entry')?.focus();
        });
      else entry.dispatchEvent(new Event('activate'));
      break;
    case 'Escape':
      closeInnermost();
      break;
    case '/':
      $('filter-text').focus();
      break;
    default:
      return;
  }
  key.preventDefault();
});

// ---------------------------------------------------------------- the forms

let filterTimer;
$('filters').addEventListener('submit', (submit) => submit.preventDefault());
$('filters').addEventListener('input', () => {
  clearTimeout(filterTimer);
  studio.runPages = 1;
  filterTimer = setTimeout(() => refreshRuns().catch(fail), 150);
});

$('more-runs').addEventListener('click', () => {
  studio.runPages++;
  refreshRuns().catch(fail);
});

$('new-run').addEventListener('submit', async (submit) => {
  submit.preventDefault();
  const task = $('new-task').value.trim();
  if (!task) return $('new-task').focus();
  try {
    const { id } = await api('POST', 'runs', { task, agent: $('new-agent').value || undefined });
    $('new-task').value = '';
    await refreshRuns();
    go({ run: id });
  } catch (error) {
    fail(error);
  }
});

$('message-form').addEventListener('submit', (submit) => {
  submit.preventDefault();
  if ($('message').value.trim()) send(studio.run.id, $('message').value.trim());
});

$('cancel').addEventListener('click', async () => {
  try {
    await api('POST', runPath(studio.run.id, '/cancel'), {});
    await refreshRun();
  } catch (error) {
    fail(error);
  }
});

$('close-run').addEventListener('click', () => go({}));
$('close-compare').addEventListener('click', () => go({ run: studio.compare?.left.id }));
$('close-inspector').addEventListener('click', closeInspector);
$('home').addEventListener('click', (click) => {
  click.preventDefault();
  go({});
});

if (!token) {
  $('no-token').hidden = false;
} else {
  // The token is in this tab's storage now: out of the address bar and the history.
  const params = new URLSearchParams(location.hash.slice(1));
  params.delete('token');
  history.replaceState(null, '', params.size ? `#${params}` : location.pathname);
  $('app').hidden = false;
  Promise.all([loadAgents(), refreshRuns()])
    .then(route)
    .then(() => document.documentElement.setAttribute('data-ready', 'yes'))
    .catch(fail);
}
