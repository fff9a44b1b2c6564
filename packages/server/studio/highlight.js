// A tiny highlighter for the code tools are given (Python, JavaScript, shell): keywords, strings,
// comments and numbers become spans holding text nodes. It builds DOM, never HTML text, so code
// that contains markup stays code.

const words = (list) => new Set(list.split(' '));

const LANGUAGES = {
  python: {
    keywords: words(
      'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case print self',
    ),
    // Triple-quoted strings first, then one-line ones (with an optional prefix), then comments.
    token:
      /([rRbBuUfF]{0,2}"""[\s\S]*?(?:"""|$)|[rRbBuUfF]{0,2}'''[\s\S]*?(?:'''|$)|[rRbBuUfF]{0,2}"(?:\\.|[^"\\\n])*"?|[rRbBuUfF]{0,2}'(?:\\.|[^'\\\n])*'?)|(#[^\n]*)|(\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|([A-Za-z_]\w*)/g,
  },
  javascript: {
    keywords: words(
      'async await break case catch class const continue debugger default delete do else export extends false finally for from function if import in instanceof let new null of return static super switch this throw true try typeof undefined var void while with yield',
    ),
    token:
      /(`(?:\\[\s\S]|[^`\\])*`?|"(?:\\.|[^"\\\n])*"?|'(?:\\.|[^'\\\n])*'?)|(\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$))|(\b\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?n?\b)|([A-Za-z_$][\w$]*)/g,
  },
  shell: {
    keywords: words(
      'if then else elif fi for while until do done case esac in function return export local readonly set unset echo cd exit source sudo',
    ),
    // A `#` starts a comment only at a word's start (not in `a#b` or `${#x}`).
    token: /("(?:\\.|[^"\\])*"?|'[^']*'?)|((?:^|(?<=\s))#[^\n]*)|(\$\{[^}\n]*\}?|\$\w+|\b\d+\b)|([A-Za-z_][\w-]*)/g,
  },
};

/** The language a tool's code argument is in, from the tool's name and the argument's, or a guess from the code. */
export function languageOf(tool, key, code) {
  const name = `${tool ?? ''} ${key ?? ''}`.toLowerCase();
  if (/python|\bpy\b/.test(name)) return 'python';
  if (/bash|shell|terminal|\bsh\b|command|cmd/.test(name)) return 'shell';
  if (/javascript|\bjs\b|node|typescript|\bts\b|script/.test(name)) return 'javascript';
  if (/^\s*(def |import |from \w+ import |print\()/m.test(code)) return 'python';
  if (/^\s*(const |let |function |import .* from |console\.)/m.test(code)) return 'javascript';
  if (/^\s*(#!\/bin\/(ba)?sh|ls |cd |echo |grep |cat |mkdir |pip |npm |curl )/m.test(code)) return 'shell';
  return undefined;
}

const span = (className, text) => {
  const node = document.createElement('span');
  node.className = className;
  node.textContent = text;
  return node;
};

/** `code` as a `<pre><code>` of text nodes and spans (`tok-keyword`, `tok-string`, `tok-comment`, `tok-number`). */
export function highlight(code, language) {
  const pre = document.createElement('pre');
  pre.className = 'code';
  const target = document.createElement('code');
  pre.append(target);
  const spec = LANGUAGES[language];
  if (language) pre.dataset.language = language;
  if (!spec) {
    target.textContent = code;
    return pre;
  }
  const pattern = new RegExp(
    spec.token.source,
    spec.token.flags.includes('m') ? spec.token.flags : `${spec.token.flags}m`,
  );
  let at = 0;
  for (const match of code.matchAll(pattern)) {
    if (match[0] === '') continue;
    if (match.index > at) target.append(document.createTextNode(code.slice(at, match.index)));
    const [text, string, comment, number, word] = match;
    if (string !== undefined) target.append(span('tok-string', text));
    else if (comment !== undefined) target.append(span('tok-comment', text));
    else if (number !== undefined) target.append(span('tok-number', text));
    else if (word !== undefined && spec.keywords.has(word)) target.append(span('tok-keyword', text));
    else target.append(document.createTextNode(text));
    at = match.index + text.length;
  }
  if (at < code.length) target.append(document.createTextNode(code.slice(at)));
  return pre;
}
