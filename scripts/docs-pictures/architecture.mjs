// The architecture diagram, from a description: the parts as boxes, the data between them as
// arrows. Coordinates are in a 1200 × 700 space; the SVG is a white card (legible on light and dark pages).
import { COLORS, escapeXml, px } from './svg.mjs';

const PURE = { fill: '#ddf4ff', stroke: '#0969da' };
const SHELL = { fill: '#fff8c5', stroke: '#9a6700' };
const WORLD = { fill: '#f6f8fa', stroke: '#57606a' };
const STORE = { fill: '#dafbe1', stroke: '#1a7f37' };
const REUSE = { fill: '#fbefff', stroke: '#8250df' };

/** The parts: `title` in bold, then `lines`; `mono` lines in a monospace font. */
export const boxes = [
  {
    id: 'host',
    x: 30,
    y: 90,
    w: 300,
    h: 100,
    style: WORLD,
    title: 'Host app',
    lines: ['your server (Express, Fastify, Hono…),', 'the CLI, a worker, a test'],
  },
  {
    id: 'run',
    x: 30,
    y: 300,
    w: 300,
    h: 110,
    style: SHELL,
    title: 'run() / stream()',
    mono: ['run(agent, task, { llm, store })'],
    lines: ['→ the outcome; stream() yields', 'each run item as it happens'],
  },
  {
    id: 'reducer',
    x: 420,
    y: 90,
    w: 360,
    h: 120,
    style: PURE,
    title: 'Reducer — pure',
    mono: ['step(config, state, event)', '  → [state, effects]'],
    lines: ['no I/O, no clock, no randomness'],
  },
  {
    id: 'driver',
    x: 420,
    y: 300,
    w: 360,
    h: 110,
    style: SHELL,
    title: 'Driver — the one loop',
    lines: ['feeds each event to step, saves the', 'transition, then performs its effects'],
  },
  {
    id: 'performers',
    x: 880,
    y: 220,
    w: 290,
    h: 270,
    style: WORLD,
    title: 'Performers',
    lines: [],
  },
  {
    id: 'models',
    x: 895,
    y: 255,
    w: 260,
    h: 76,
    style: WORLD,
    title: 'Model ports',
    lines: ['OpenAI, Anthropic, Bedrock,', 'Google, any AI SDK model'],
    small: true,
  },
  {
    id: 'tools',
    x: 895,
    y: 341,
    w: 260,
    h: 60,
    style: WORLD,
    title: 'Tools',
    lines: ['python_execute, browser_use, MCP, …'],
    small: true,
  },
  {
    id: 'people',
    x: 895,
    y: 411,
    w: 260,
    h: 60,
    style: WORLD,
    title: 'People',
    lines: ['approvals, ask_human'],
    small: true,
  },
  {
    id: 'stores',
    x: 420,
    y: 530,
    w: 360,
    h: 110,
    style: STORE,
    title: 'Checkpoint stores',
    lines: [
      'memory · file · SQLite · Postgres',
      'each transition saved before its',
      'effects run: a run resumes from it',
    ],
  },
  {
    id: 'reuse',
    x: 30,
    y: 530,
    w: 300,
    h: 110,
    style: REUSE,
    title: 'Flows and durable runs',
    lines: ['@openmanus/flow: the planning flow', '@openmanus/durable: runs as', 'workflows on Postgres (DBOS)'],
  },
];

/** The data between the parts: from a point to a point, a label beside the line. */
export const arrows = [
  { from: [130, 190], to: [130, 300], label: 'agent, task, model', at: [140, 250], anchor: 'start' },
  { from: [210, 300], to: [210, 190], label: 'run items, outcome', at: [220, 232], anchor: 'start' },
  { from: [330, 355], to: [420, 355], label: 'starts', at: [375, 345], anchor: 'middle' },
  { from: [530, 300], to: [530, 210], label: 'event', at: [520, 260], anchor: 'end' },
  { from: [670, 210], to: [670, 300], label: '[state, effects]', at: [680, 260], anchor: 'start' },
  { from: [780, 330], to: [880, 330], label: 'effects', at: [830, 320], anchor: 'middle' },
  { from: [880, 385], to: [780, 385], label: 'events back', at: [830, 405], anchor: 'middle' },
  { from: [600, 410], to: [600, 530], label: 'each transition', at: [610, 475], anchor: 'start' },
  { from: [330, 585], to: [460, 410], label: 'reuse the driver', at: [352, 500], anchor: 'start', curve: true },
];

const FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif";
const MONO = "ui-monospace, 'SFMono-Regular', 'DejaVu Sans Mono', Menlo, Consolas, monospace";

function drawBox(box) {
  const out = [
    `<g class="part" data-part="${escapeXml(box.id)}">`,
    `<rect x="${box.x}" y="${box.y}" width="${box.w}" height="${box.h}" rx="10" fill="${box.style.fill}" stroke="${box.style.stroke}" stroke-width="1.5"/>`,
  ];
  const titleSize = box.small ? 14 : 17;
  let y = box.y + (box.small ? 22 : 28);
  out.push(
    `<text x="${box.x + 14}" y="${y}" font-size="${titleSize}" font-weight="600" fill="${COLORS.text}">${escapeXml(box.title)}</text>`,
  );
  y += box.small ? 6 : 8;
  for (const line of box.mono ?? []) {
    y += 20;
    out.push(
      `<text x="${box.x + 14}" y="${y}" font-size="14" font-family="${escapeXml(MONO)}" fill="${COLORS.text}" xml:space="preserve">${escapeXml(line)}</text>`,
    );
  }
  for (const line of box.lines) {
    y += box.small ? 16 : 19;
    out.push(
      `<text x="${box.x + 14}" y="${y}" font-size="${box.small ? 12.5 : 14}" fill="${COLORS.muted}">${escapeXml(line)}</text>`,
    );
  }
  out.push('</g>');
  return out.join('\n');
}

function drawArrow(arrow) {
  const [x1, y1] = arrow.from;
  const [x2, y2] = arrow.to;
  const path = arrow.curve
    ? `M${x1},${y1} C${x1 + 80},${y1} ${x2},${y2 + 80} ${x2},${y2}`
    : `M${x1},${y1} L${x2},${y2}`;
  return [
    `<path d="${path}" fill="none" stroke="${COLORS.text}" stroke-width="1.6" marker-end="url(#arrow)"${arrow.curve ? ' stroke-dasharray="5 4"' : ''}/>`,
    `<text x="${px(arrow.at[0])}" y="${px(arrow.at[1])}" font-size="13" text-anchor="${arrow.anchor}" fill="${COLORS.text}" font-style="italic">${escapeXml(arrow.label)}</text>`,
  ].join('\n');
}

/** The diagram as an SVG document. */
export function architectureSvg() {
  const width = 1200;
  const height = 700;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${escapeXml(FONT)}" role="img" aria-label="OpenManus-TS architecture">`,
    '<title>OpenManus-TS: a pure reducer, one driver, performers and stores</title>',
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse">' +
      `<path d="M0,0 L10,5 L0,10 z" fill="${COLORS.text}"/></marker></defs>`,
    `<rect x="0.5" y="0.5" width="${width - 1}" height="${height - 1}" rx="12" fill="${COLORS.card}" stroke="${COLORS.border}"/>`,
    `<text x="30" y="48" font-size="22" font-weight="600" fill="${COLORS.text}">OpenManus-TS: an agent is data, a step is a pure function, the world is effects</text>`,
    `<text x="30" y="72" font-size="13.5" fill="${COLORS.muted}">Blue: pure (the reducer). Yellow: the shell that runs it. Grey: the world it reaches through ports. Green: where runs are kept.</text>`,
    ...boxes.map(drawBox),
    ...arrows.map(drawArrow),
    '</svg>',
    '',
  ].join('\n');
}
