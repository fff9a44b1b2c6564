/**
 * Characters a terminal acts on instead of showing: C0 controls (ESC starts the sequences that set
 * the window title, hide a link in OSC 8 or clear the screen; BEL ends them), DEL, C1 controls
 * (U+009B is a CSI of its own to some terminals), and the bidi overrides and line separators that
 * make text read other than it is. Newline and tab are kept where text may span lines.
 */
const CONTROLS_AND_LINE_BREAKS = /[\p{Cc}\p{Zl}\p{Zp}\u202a-\u202e\u2066-\u2069]/gu;
const CONTROLS = /(?![\n\t])[\p{Cc}\p{Zl}\p{Zp}\u202a-\u202e\u2066-\u2069]/gu;

const shown = (char: string) => {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * `text` from a model, a tool or a server, safe to print: every control character shown as its
 * escape (`\x1b`, `\x07`, `\u202e`), so that a terminal shows it and does nothing. Multi-line text
 * keeps its newlines and tabs (a Windows line end is a newline); `oneLine` escapes them too. Our
 * own colours are added after, around text escaped here.
 */
export function terminalText(text: string, { oneLine = false }: { readonly oneLine?: boolean } = {}): string {
  return oneLine ? text.replace(CONTROLS_AND_LINE_BREAKS, shown) : text.replace(/\r\n/g, '\n').replace(CONTROLS, shown);
}
