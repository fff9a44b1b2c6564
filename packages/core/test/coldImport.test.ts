import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

// What a process that imports the built package has loaded: every module, through both loaders
// (zod and node:child_process are require()d on first use, the openai SDK is import()ed).
const coreDist = new URL('../dist/index.js', import.meta.url).href;

function modulesLoadedBy(script: string): string[] {
  const probe = `
    import Module, { register } from 'node:module';
    const loaded = new Set();
    const load = Module._load;
    Module._load = function (request, ...rest) { loaded.add(request); return load.call(this, request, ...rest); };
    const { port1, port2 } = new MessageChannel();
    let flushed;
    port1.on('message', (url) => (url === null ? flushed() : loaded.add(url)));
    port1.unref();
    // The hooks answer a flush after every URL they posted before it (one ordered channel).
    register('data:text/javascript,' + encodeURIComponent(
      'let port; export function initialize(data) { port = data.port; port.on("message", () => port.postMessage(null)); port.unref(); }' +
      'export async function resolve(s, c, next) { const r = await next(s, c); port.postMessage(r.url); return r; }'
    ), { data: { port: port2 }, transferList: [port2] });
    const core = await import(${JSON.stringify(coreDist)});
    ${script}
    port1.ref();
    await new Promise((r) => { flushed = r; port1.postMessage('flush'); });
    port1.close();
    console.log(JSON.stringify([...loaded]));
  `;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', probe], { encoding: 'utf8' }));
}

const heavy = (modules: string[]) =>
  modules.filter((m) =>
    /[/\\]node_modules[/\\](zod|openai|@anthropic-ai|ai|@ai-sdk|@aws-sdk|@smithy)[/\\]|^(zod|openai|@anthropic-ai\/sdk|ai|@ai-sdk\/[\w-]+|@aws-sdk\/[\w-]+|@smithy\/[\w-]+)$|child_process/.test(
      m,
    ),
  );

describe('a cold import', () => {
  it('loads neither zod, nor the openai, Anthropic, AWS or AI SDK, nor node:child_process', () => {
    const modules = modulesLoadedBy('');
    // The probe sees the package's own modules (the entry and the chunks it shares with the
    // other entry points): an empty list would prove nothing.
    expect(modules.some((m) => /\/dist\/chunks\/kernel-[\w-]+\.js$/.test(m))).toBe(true);
    expect(heavy(modules)).toEqual([]);
  });

  it('nor does defining Manus, an OpenAI, an Anthropic, a Gemini and a Bedrock model: they load on the first call that needs them', () => {
    const modules = modulesLoadedBy(
      `core.createManus({ workspace: process.cwd() }); core.createOpenAiLlm({ model: 'm', apiKey: 'k' });` +
        ` core.createAnthropicLlm({ model: 'm', apiKey: 'k' }); core.createGoogleLlm({ model: 'g', apiKey: 'k' });` +
        ` core.createBedrockLlm({ model: 'anthropic.claude-3-7-sonnet-20250219-v1:0', endpoint: 'bedrock-runtime.us-west-2.amazonaws.com' });`,
    );
    expect(heavy(modules)).toEqual([]);
  });

  it('the probe does see zod once a built-in tool validates a call', () => {
    const modules = modulesLoadedBy(`core.terminate.parse({ status: 'success' });`);
    expect(heavy(modules).some((m) => m.includes('zod'))).toBe(true);
  });
});
