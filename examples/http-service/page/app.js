// The service's page: starts runs and watches one live. Plain JavaScript, no build step.
// The token comes in the address's fragment (never sent to a server), is kept for this tab only
// (sessionStorage) and goes out as a header: no cookie, so another site's page cannot use it.
// Everything a run says is put in with textContent: a model's words are never markup.

const $ = (id) => document.getElementById(id);

const token = (() => {
  const given = new URLSearchParams(location.hash.slice(1)).get('token');
  if (given) sessionStorage.setItem('openmanus-token', given);
  return given ?? sessionStorage.getItem('openmanus-token');
})();

const MARKS = { not_started: '[ ]', in_progress: '[→]', completed: '[✓]', blocked: '[!]' };

async function api(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(json.error ?? `${res.status} ${res.statusText}`);
  return json;
}

const el = (tag, text, className) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
};

/** The run shown: its view (as the service sends it), updated by the events that follow. */
let view;
/** Which call each running tool effect is, to put its result in place. */
const calls = new Map();
let watching;

/** Applies one server-sent item to the view (a child agent's items are left to its own call). */
function apply(item) {
  if (item.origin) return;
  switch (item.type) {
    case 'snapshot':
    case 'paused':
    case 'ended':
      view = item.run;
      return;
    case 'plan':
      view.plan = item.plan;
      return;
    case 'observation':
      if (item.observation.kind === 'stepStarted') view.step = item.observation.step;
      return;
    case 'effect':
      if (item.effect.type === 'callTool') calls.set(item.effect.id, item.effect.call.id);
      return;
    case 'result':
      view.status = item.result.status;
      view.usage = item.result.usage;
      view.answer = item.result.answer;
      view.error = item.result.error;
      return;
    case 'event':
      view.status = item.status;
      view.step = item.step;
      view.usage = item.usage;
      applyEvent(item.event);
  }
}

function applyEvent(event) {
  const { timeline } = view;
  switch (event.type) {
    case 'started':
      timeline.push({ kind: 'user', text: event.input });
      view.answer = undefined;
      return;
    case 'llmResponded':
      if (event.content.trim()) timeline.push({ kind: 'assistant', text: event.content });
      for (const call of event.toolCalls)
        timeline.push({ kind: 'call', callId: call.id, tool: call.name, args: call.arguments });
      return;
    case 'toolCompleted': {
      const entry = timeline.find((e) => e.kind === 'call' && e.callId === calls.get(event.effectId));
      if (entry) Object.assign(entry, { result: event.output, isError: event.isError });
      return;
    }
    case 'approvalGiven':
    case 'approvalDenied':
    case 'humanReplied':
      view.pending = view.pending.filter((p) => p.effectId !== event.effectId);
  }
}

const count = (n) => n.toLocaleString('en-US');

/** `12,345 in (9,876 cached) · 456 out · $0.0123`: the cache where the provider reported it, the cost or that it is unknown. */
function usageText(usage) {
  const cached = usage.cachedInputTokens === undefined ? '' : ` (${count(usage.cachedInputTokens)} cached)`;
  const { costUsd } = usage;
  const cost =
    costUsd === null ? 'cost unknown' : costUsd > 0 && costUsd < 0.0001 ? '<$0.0001' : `$${costUsd.toFixed(4)}`;
  return `${count(usage.inputTokens)} in${cached} · ${count(usage.outputTokens)} out · ${cost}`;
}

function render() {
  $('run').hidden = !view;
  if (!view) return;
  const done = view.status === 'finished' || view.status === 'failed';
  $('status').textContent = `${view.status}${view.finishReason ? ` (${view.finishReason})` : ''} · step ${view.step}`;
  $('usage').textContent = view.usage ? usageText(view.usage) : '';
  $('cancel').hidden = done;

  $('plan-box').hidden = !view.plan;
  if (view.plan) {
    $('plan-title').textContent = `Plan: ${view.plan.title}`;
    $('plan').replaceChildren(
      ...view.plan.steps.map((step) => {
        const li = el('li', `${MARKS[step.status] ?? ''} ${step.text}${step.notes ? ` — ${step.notes}` : ''}`);
        li.dataset.status = step.status;
        return li;
      }),
    );
  }

  $('timeline').replaceChildren(
    ...view.timeline.map((entry) => {
      if (entry.kind !== 'call') return el('li', entry.text, entry.kind);
      const li = el('li', undefined, 'call');
      li.dataset.tool = entry.tool;
      li.append(el('code', entry.tool), el('pre', entry.args));
      if (entry.result !== undefined) li.append(el('pre', entry.result, entry.isError ? 'result failed' : 'result'));
      return li;
    }),
  );

  $('pending-box').hidden = view.pending.length === 0;
  $('pending').replaceChildren(
    ...view.pending.map((input) => {
      const li = el('li');
      if (input.kind === 'human') {
        li.append(el('p', `The agent asks: ${input.question}`), el('p', 'Answer below.', 'muted'));
        return li;
      }
      const approve = el('button', 'Approve', 'approve');
      const reject = el('button', 'Reject', 'reject');
      approve.type = reject.type = 'button';
      approve.onclick = () => decide('approve', input.effectId);
      reject.onclick = () => decide('reject', input.effectId, prompt('Why? (the model is told)') ?? undefined);
      li.append(
        el('p', `${input.tool} wants to run:`),
        el('pre', input.args),
        approve,
        document.createTextNode(' '),
        reject,
      );
      return li;
    }),
  );

  $('answer-box').hidden = !done || !view.answer;
  $('answer').textContent = view.answer ?? '';
  $('error').hidden = !view.error;
  // A run's error is `{ code, message }`: the page shows the message, the code beside it.
  $('error').textContent = view.error ? `${view.error.message} (${view.error.code})` : '';
  const asked = view.pending.some((p) => p.kind === 'human');
  $('message-form').hidden = !(done || asked);
  $('message-label').textContent = asked ? 'Your answer' : 'Continue the conversation';
}

function logItem(item) {
  const what =
    item.type === 'event'
      ? `event ${item.event.type}`
      : item.type === 'effect'
        ? `effect ${item.effect.type}`
        : item.type;
  $('events').append(el('li', what));
  $('event-count').textContent = String($('events').children.length);
}

/** Reads a server-sent event stream with fetch (EventSource cannot send the token header). */
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
          .find((line) => line.startsWith(`${name}: `))
          ?.slice(name.length + 2);
      const data = field('data');
      if (data) yield { id: field('id'), data: JSON.parse(data) };
    }
  }
}

/** Follows a run's events until its leg ends (it paused or finished); reconnects if the service goes away. */
async function watch(id) {
  watching?.abort();
  const controller = new AbortController();
  watching = controller;
  let lastEventId;
  for (;;) {
    try {
      const response = await fetch(`/runs/${encodeURIComponent(id)}/events`, {
        headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal: controller.signal,
      });
      if (!response.ok) throw new Error(`events: ${response.status}`);
      $('connection').textContent = 'connected';
      for await (const message of serverSentEvents(response)) {
        if (message.id) lastEventId = message.id;
        logItem(message.data);
        apply(message.data);
        render();
      }
      await refreshRuns();
      return;
    } catch (error) {
      if (controller.signal.aborted) return;
      $('connection').textContent = `reconnecting (${error.message})…`;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

async function show(id) {
  location.hash = `run=${encodeURIComponent(id)}`;
  view = { id, status: 'starting', step: 0, pending: [], timeline: [] };
  calls.clear();
  $('events').replaceChildren();
  render();
  await refreshRuns();
  await watch(id);
}

async function decide(action, effectId, reason) {
  try {
    await api('POST', `/runs/${encodeURIComponent(view.id)}/${action}`, { effectId, ...(reason ? { reason } : {}) });
    view.pending = view.pending.filter((p) => p.effectId !== effectId);
    render();
    await watch(view.id);
  } catch (error) {
    alert(error.message);
  }
}

async function refreshRuns() {
  const { runs } = await api('GET', '/runs');
  $('runs').replaceChildren(
    ...runs.map((run) => {
      const li = el('li');
      li.append(el('span', run.task ?? run.id), el('span', ` · ${run.status}`, 'muted'));
      if (run.id === view?.id) li.className = 'selected';
      li.onclick = () => show(run.id);
      return li;
    }),
  );
}

$('new-run').onsubmit = async (submit) => {
  submit.preventDefault();
  try {
    const { id } = await api('POST', '/runs', { task: $('task').value });
    await show(id);
  } catch (error) {
    alert(error.message);
  }
};

$('message-form').onsubmit = async (submit) => {
  submit.preventDefault();
  try {
    await api('POST', `/runs/${encodeURIComponent(view.id)}/messages`, { text: $('message').value });
    $('message').value = '';
    $('message-form').hidden = true;
    await watch(view.id);
  } catch (error) {
    alert(error.message);
  }
};

$('cancel').onclick = async () => {
  try {
    view = await api('POST', `/runs/${encodeURIComponent(view.id)}/cancel`, {});
    render();
  } catch (error) {
    alert(error.message);
  }
};

if (!token) {
  $('no-token').hidden = false;
} else {
  // The token is in this tab's storage now: out of the address bar and the history.
  const run = new URLSearchParams(location.hash.slice(1)).get('run');
  history.replaceState(null, '', run ? `#run=${encodeURIComponent(run)}` : location.pathname);
  $('app').hidden = false;
  refreshRuns().catch((error) => ($('connection').textContent = error.message));
  if (run) show(run);
}
