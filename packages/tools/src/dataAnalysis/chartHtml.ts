// A chart as one HTML file a person opens offline: Vega, Vega-Lite and vega-embed are inlined (no
// CDN), and a Content-Security-Policy lets only these scripts run — no eval (expressions are
// interpreted), no network, no images but inline ones.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { VegaLiteSpec } from './chartSpec.js';
import type { ChartLanguage } from './insights.js';

/** Each library's browser build, beside the module its package exports. */
const BUILDS = [
  ['vega', 'vega.min.js'],
  ['vega-lite', 'vega-lite.min.js'],
  ['vega-embed', 'vega-embed.min.js'],
] as const;

let libraries: Promise<string[]> | undefined;
const loadLibraries = () => {
  const require = createRequire(import.meta.url);
  libraries ??= Promise.all(BUILDS.map(([name, file]) => readFile(join(dirname(require.resolve(name)), file), 'utf8')));
  return libraries;
};

/**
 * JSON as a script literal. No `<` at all: a `</script>` or `<!--` in a title or a label would
 * otherwise end or derail the script element. The line separators are escaped as well.
 */
const jsonLiteral = (value: unknown) =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const sha256 = (code: string) => `'sha256-${createHash('sha256').update(code, 'utf8').digest('base64')}'`;

const embed = (spec: VegaLiteSpec) => `
const refuse = () => Promise.reject(new Error('this chart loads nothing: its data is in the page'));
vegaEmbed('#chart', ${jsonLiteral(spec)}, {
  renderer: 'svg',
  ast: true,
  expr: vegaEmbed.expressionInterpreter,
  loader: { load: refuse, sanitize: refuse, http: refuse, file: refuse },
  actions: { export: true, source: false, compiled: false, editor: false },
}).catch((error) => {
  document.getElementById('chart').textContent = 'The chart could not be drawn: ' + error.message;
});`;

/** The page: the chart, drawn by the inlined libraries when it is opened. */
export async function chartHtml(spec: VegaLiteSpec, title: string, language: ChartLanguage): Promise<string> {
  const scripts = [...(await loadLibraries()), embed(spec)];
  const policy = [
    "default-src 'none'",
    `script-src ${scripts.map(sha256).join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data: blob:',
  ].join('; ');
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(language)}">`,
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${policy}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<style>body { font-family: system-ui, sans-serif; margin: 2rem; }</style>',
    '</head>',
    '<body>',
    '<div id="chart"></div>',
    ...scripts.map((code) => `<script>${code}</script>`),
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
