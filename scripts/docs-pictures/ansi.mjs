// Terminal output (ANSI SGR colours) to HTML, and a terminal window around it. Everything is escaped.

export function escapeHtml(text) {
  return String(text)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** The 8 standard colours (30–37 / 40–47) and their bright forms (90–97), as a dark terminal shows them. */
export const PALETTE = ['#3b4048', '#ff6b6b', '#7ee787', '#f2cc60', '#79c0ff', '#d2a8ff', '#56d4dd', '#e6edf3'];
const BRIGHT = ['#6e7681', '#ffa198', '#aff5b4', '#f8e3a1', '#a5d6ff', '#e2c5ff', '#b3f0ff', '#ffffff'];

// Built from strings: the escape and control characters are what these match.
const ESC = '\u001b';
/** Escape sequences: CSI … final byte, OSC … BEL or ST, or a lone ESC and one character. */
const SEQUENCES = new RegExp(`(${ESC}\\[[0-?]*[ -/]*[@-~]|${ESC}\\][^\u0007${ESC}]*(?:\u0007|${ESC}\\\\)|${ESC}.)`);
const SGR = new RegExp(`^${ESC}\\[([0-9;]*)m$`);
/** `text` without control characters but newline and tab. */
const withoutControls = (text) =>
  [...text]
    .filter((char) => {
      const code = char.charCodeAt(0);
      return code === 9 || code === 10 || (code >= 32 && code !== 127);
    })
    .join('');

/**
 * `text` with SGR sequences (`ESC[…m`) as `<span>`s with inline styles; every other escape
 * sequence and control character is dropped, and the text is HTML-escaped.
 */
export function ansiToHtml(text) {
  let style = {};
  let out = '';
  const open = () => {
    const css = [];
    if (style.bold) css.push('font-weight:bold');
    if (style.dim) css.push('opacity:0.6');
    if (style.italic) css.push('font-style:italic');
    if (style.underline) css.push('text-decoration:underline');
    if (style.fg) css.push(`color:${style.fg}`);
    if (style.bg) css.push(`background:${style.bg}`);
    return css.length ? `<span style="${css.join(';')}">` : '';
  };
  const tokens = String(text).split(SEQUENCES);
  for (const token of tokens) {
    if (!token) continue;
    if (token.startsWith('\u001b')) {
      const sgr = token.match(SGR);
      if (!sgr) continue;
      const codes = sgr[1] === '' ? [0] : sgr[1].split(';').map(Number);
      for (let i = 0; i < codes.length; i++) {
        const code = codes[i];
        if (code === 0) style = {};
        else if (code === 1) style = { ...style, bold: true };
        else if (code === 2) style = { ...style, dim: true };
        else if (code === 3) style = { ...style, italic: true };
        else if (code === 4) style = { ...style, underline: true };
        else if (code === 22) style = { ...style, bold: false, dim: false };
        else if (code === 23) style = { ...style, italic: false };
        else if (code === 24) style = { ...style, underline: false };
        else if (code >= 30 && code <= 37) style = { ...style, fg: PALETTE[code - 30] };
        else if (code >= 90 && code <= 97) style = { ...style, fg: BRIGHT[code - 90] };
        else if (code === 39) style = { ...style, fg: undefined };
        else if (code >= 40 && code <= 47) style = { ...style, bg: PALETTE[code - 40] };
        else if (code >= 100 && code <= 107) style = { ...style, bg: BRIGHT[code - 100] };
        else if (code === 49) style = { ...style, bg: undefined };
        else if ((code === 38 || code === 48) && codes[i + 1] === 5) i += 2;
        else if ((code === 38 || code === 48) && codes[i + 1] === 2) i += 4;
      }
      continue;
    }
    const visible = withoutControls(token.replace(/\r\n/g, '\n'));
    const span = open();
    out += span ? `${span}${escapeHtml(visible)}</span>` : escapeHtml(visible);
  }
  return out;
}

/** A terminal window (title bar, prompt, the output) as an HTML page. */
export function terminalHtml({ title, command, output, columns = 132 }) {
  return `<!doctype html>
<html><head><meta charset="utf-8"><style>
  body { margin: 0; padding: 24px; background: #ffffff; font-family: system-ui, sans-serif; }
  .window { width: ${columns}ch; border-radius: 10px; overflow: hidden; background: #0d1117;
    box-shadow: 0 8px 24px rgba(0,0,0,.25); border: 1px solid #30363d;
    font-family: 'DejaVu Sans Mono', ui-monospace, Menlo, Consolas, monospace; font-size: 13px; }
  .bar { background: #161b22; color: #8b949e; padding: 8px 12px; font-size: 12px; display: flex; gap: 8px;
    align-items: center; font-family: system-ui, sans-serif; border-bottom: 1px solid #30363d; }
  .dot { width: 12px; height: 12px; border-radius: 50%; display: inline-block; }
  .title { margin-left: 8px; }
  pre { margin: 0; padding: 14px 16px 18px; color: #e6edf3; white-space: pre-wrap; word-break: break-all;
    line-height: 1.45; font: inherit; }
  .prompt { color: #7ee787; }
</style></head><body>
<div class="window" id="terminal">
<div class="bar"><span class="dot" style="background:#ff5f56"></span><span class="dot" style="background:#ffbd2e"></span><span class="dot" style="background:#27c93f"></span><span class="title">${escapeHtml(title)}</span></div>
<pre><span class="prompt">$</span> ${escapeHtml(command)}
${ansiToHtml(output)}</pre>
</div></body></html>
`;
}
