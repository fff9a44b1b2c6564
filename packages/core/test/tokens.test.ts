import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LlmRequest } from '../src/kernel/effects.js';
import type { Message } from '../src/kernel/messages.js';
import { initialState } from '../src/kernel/reducer.js';
import {
  imageSize,
  imageTokens,
  loadTokenizer,
  messageTokens,
  requestTokens,
  textTokens,
  tokenizerReady,
  toolSpecTokens,
} from '../src/kernel/tokens.js';
import type { ToolSpec } from '../src/kernel/tool.js';
import { drive, ofType, stepWith, testConfig } from './helpers.js';

const base64 = (bytes: readonly number[]) => Buffer.from(bytes).toString('base64');
const image = (data: string) => ({ base64: data, mimeType: 'image/png' });

/** The first 33 bytes of a PNG: signature, IHDR length and type, width and height (big-endian), depth, colour type. */
const pngBytes = (width: number, height: number) => {
  const bytes = new Uint8Array(33);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);
  const view = new DataView(bytes.buffer);
  view.setUint32(16, width);
  view.setUint32(20, height);
  bytes.set([8, 6, 0, 0, 0], 24);
  return [...bytes];
};
const png = (width: number, height: number) => base64(pngBytes(width, height));

/** A JPEG marker segment: FF, marker, a big-endian length that counts itself, the body. */
const segment = (marker: number, body: readonly number[]) => [
  0xff,
  marker,
  (body.length + 2) >> 8,
  (body.length + 2) & 0xff,
  ...body,
];
/** A start-of-frame segment: precision, height, width, three components. */
const frame = (marker: number, width: number, height: number) =>
  segment(marker, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1]);
const jfif = segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]);
const quantTable = segment(
  0xdb,
  Array.from({ length: 65 }, (_, i) => i + 1),
);
/** Segments that are not frames although their markers sit among C0..CF; read as one they would give 515 x 1029. */
const lookalike = (marker: number) => segment(marker, [0, 4, 5, 2, 3, 9, 9, 9]);
const jpeg = (...segments: readonly number[][]) => base64([0xff, 0xd8, ...segments.flat(), 0xff, 0xd9]);

describe('textTokens before any tokenizer is loaded', () => {
  it('estimates a quarter of the characters, rounded up, and nothing for empty text', () => {
    expect(textTokens('', 'estimate')).toBe(0);
    expect(textTokens('a', 'estimate')).toBe(1);
    expect(textTokens('abcd', 'estimate')).toBe(1);
    expect(textTokens('abcde', 'estimate')).toBe(2);
    expect(textTokens('x'.repeat(400), 'estimate')).toBe(100);
  });

  it('says which tokenizer to load instead of counting with one that is not loaded', () => {
    expect(tokenizerReady('estimate')).toBe(true);
    expect(tokenizerReady('cl100k_base')).toBe(false);
    expect(tokenizerReady('o200k_base')).toBe(false);
    expect(() => textTokens('hello', 'cl100k_base')).toThrow(
      new Error(`tokenizer "cl100k_base" is not loaded: await loadTokenizer('cl100k_base') first`),
    );
    expect(() => textTokens('hello', 'o200k_base')).toThrow(/tokenizer "o200k_base" is not loaded/);
  });

  it('counts empty text as nothing even with a tokenizer that is not loaded', () => {
    expect(textTokens('', 'cl100k_base')).toBe(0);
  });

  it('loading the estimate loads nothing else', async () => {
    await loadTokenizer('estimate');
    expect(tokenizerReady('cl100k_base')).toBe(false);
    expect(tokenizerReady('o200k_base')).toBe(false);
  });
});

describe('textTokens with real tokenizers', () => {
  beforeAll(async () => {
    await loadTokenizer('cl100k_base');
    await loadTokenizer('o200k_base');
  }, 300_000);

  it('is ready once loaded', () => {
    expect(tokenizerReady('cl100k_base')).toBe(true);
    expect(tokenizerReady('o200k_base')).toBe(true);
  });

  it('counts with cl100k_base (GPT-4) and o200k_base (GPT-4o), each its own ranks', () => {
    expect(textTokens('hello world', 'cl100k_base')).toBe(2);
    expect(textTokens('hello world', 'o200k_base')).toBe(2);
    // Japanese is where the two vocabularies differ most.
    expect(textTokens('こんにちは世界', 'cl100k_base')).toBe(4);
    expect(textTokens('こんにちは世界', 'o200k_base')).toBe(2);
    expect(textTokens('Dinosaurs are cool', 'cl100k_base')).toBe(5);
    expect(textTokens('Dinosaurs are cool', 'o200k_base')).toBe(4);
  });

  it('loading again keeps the same counts', async () => {
    await loadTokenizer('o200k_base');
    expect(textTokens('こんにちは世界', 'o200k_base')).toBe(2);
  });

  it('counts each message by tokenizer: a count made with one is not reused for another', () => {
    const message: Message = { role: 'user', content: 'こんにちは世界' };
    expect(messageTokens(message, 'estimate')).toBe(4 + 1 + 2);
    expect(messageTokens(message, 'cl100k_base')).toBe(4 + 1 + 4);
    expect(messageTokens(message, 'o200k_base')).toBe(4 + 1 + 2);
    expect(messageTokens(message, 'cl100k_base')).toBe(4 + 1 + 4);
  });

  it('counts a whole request with the configured tokenizer', () => {
    const request: LlmRequest = {
      messages: [
        { role: 'system', content: 'hello world' },
        { role: 'user', content: 'こんにちは世界' },
      ],
      tools: [],
      toolChoice: 'auto',
    };
    expect(requestTokens(request, 'cl100k_base')).toBe(2 + (4 + 1 + 2) + (4 + 1 + 4));
    expect(requestTokens(request, 'o200k_base')).toBe(2 + (4 + 1 + 2) + (4 + 1 + 2));
  });
});

// Text that spells a special token (a file about tokenizers, a model reply quoting one) is ordinary text in a
// message: the API does not treat it as a control token, and a count must not throw on it. js-tiktoken's
// `encode(text)` refuses it by default ("The text contains a special token that is not allowed").
describe('special-token text is counted as plain text', () => {
  beforeAll(async () => {
    await loadTokenizer('cl100k_base');
  }, 300_000);

  it('counts "<|endoftext|>" in a message instead of throwing', () => {
    expect(textTokens('<|endoftext|>', 'cl100k_base')).toBe(7);
  });

  it('a run with a token budget whose task quotes a special token sends its request', () => {
    const config = testConfig({ tokenizer: 'cl100k_base' });
    const task = 'What does <|endoftext|> mean in GPT training data?';
    const { state, effects } = drive(config, task, [], stepWith({ maxInputTokens: 10_000 }));
    expect(state.status).toBe('awaiting_llm');
    expect(ofType(effects, 'callLlm')).toHaveLength(1);
  });
});

describe('messageTokens (estimate)', () => {
  // 'user' and 'tool' are 1 token estimated, 'system' 2, 'assistant' 3.
  it('counts 4 per message plus its role and content', () => {
    expect(messageTokens({ role: 'user', content: 'abcdefgh' }, 'estimate')).toBe(4 + 1 + 2);
    expect(messageTokens({ role: 'system', content: 'abcdefghi' }, 'estimate')).toBe(4 + 2 + 3);
    expect(messageTokens({ role: 'assistant', content: '' }, 'estimate')).toBe(4 + 3);
  });

  it("adds each of an assistant's tool calls: its name and arguments, not its id", () => {
    const message: Message = {
      role: 'assistant',
      content: 'ok',
      toolCalls: [
        { id: 'call_with_a_long_id_that_is_not_counted', name: 'echo', arguments: '{"text":"hello there"}' },
        { id: 'b', name: 'write_file', arguments: '' },
      ],
    };
    // content 1; echo 1 + 22 chars → 6; write_file 3 + nothing.
    expect(messageTokens(message, 'estimate')).toBe(4 + 3 + 1 + (1 + 6) + 3);
  });

  it("adds a tool result's tool name and call id", () => {
    const message: Message = { role: 'tool', content: 'ok', toolCallId: 'call_12345678', name: 'python_execute' };
    // content 1; python_execute 14 chars → 4; call_12345678 13 chars → 4.
    expect(messageTokens(message, 'estimate')).toBe(4 + 1 + 1 + 4 + 4);
  });

  it('adds the image of a user message or a tool result', () => {
    const shot = image(png(1024, 1024));
    expect(messageTokens({ role: 'user', content: 'abcd', image: shot }, 'estimate')).toBe(4 + 1 + 1 + 765);
    const tool: Message = {
      role: 'tool',
      content: 'abcd',
      toolCallId: 'abcd',
      name: 'abcd',
      image: image(png(2048, 4096)),
    };
    expect(messageTokens(tool, 'estimate')).toBe(4 + 1 + 1 + 1 + 1 + 1105);
  });

  it('charges nothing for an image field on a message kind that cannot carry one', () => {
    // A saved state may carry keys this version does not know; only user and tool images are sent.
    const assistant = { role: 'assistant', content: 'abcd', image: image(png(1024, 1024)) } as Message;
    expect(messageTokens(assistant, 'estimate')).toBe(4 + 3 + 1);
    const system = { role: 'system', content: 'abcd', image: image(png(1024, 1024)) } as Message;
    expect(messageTokens(system, 'estimate')).toBe(4 + 2 + 1);
  });

  it('counts a message once: the count is kept for that (immutable) message object', () => {
    const message = { role: 'user', content: 'abcd' } as { role: 'user'; content: string };
    expect(messageTokens(message, 'estimate')).toBe(6);
    message.content = 'x'.repeat(400);
    expect(messageTokens(message, 'estimate')).toBe(6);
    expect(messageTokens({ ...message }, 'estimate')).toBe(4 + 1 + 100);
  });
});

describe('toolSpecTokens and requestTokens (estimate)', () => {
  const spec = (name: string, extra: Partial<ToolSpec> = {}): ToolSpec => ({
    name,
    description: 'Does one thing',
    parameters: { type: 'object', properties: {} },
    ...extra,
  });
  /** What the model is sent of a tool: its name, description and parameters as JSON. */
  const sent = (tool: ToolSpec) =>
    Math.ceil(
      JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }).length / 4,
    );

  it('counts what the model is sent of each tool: name, description and parameters', () => {
    const tools = [spec('a'), spec('longer_name')];
    expect(toolSpecTokens([], 'estimate')).toBe(0);
    expect(toolSpecTokens(tools, 'estimate')).toBe(sent(spec('a')) + sent(spec('longer_name')));
    expect(sent(spec('a'))).toBeGreaterThan(10);
  });

  it('does not count the flags the model never sees', () => {
    const flagged = spec('a', {
      terminal: true,
      needsApproval: true,
      parallelSafe: true,
      timeoutMs: 120_000,
      atMostOnce: true,
      human: { questionArg: 'question' },
    });
    expect(toolSpecTokens([flagged], 'estimate')).toBe(sent(spec('a')));
  });

  it('counts a tool list once: the count is kept for that (immutable) list', () => {
    const tools: ToolSpec[] = [spec('a')];
    const once = toolSpecTokens(tools, 'estimate');
    tools.push(spec('b'));
    expect(toolSpecTokens(tools, 'estimate')).toBe(once);
    expect(toolSpecTokens([...tools], 'estimate')).toBe(sent(spec('a')) + sent(spec('b')));
  });

  it('a request is 2 tokens plus its messages plus its tools', () => {
    const tools = [spec('a')];
    const request: LlmRequest = {
      messages: [
        { role: 'system', content: 'abcdefgh' },
        { role: 'user', content: 'abcd' },
      ],
      tools,
      toolChoice: 'auto',
    };
    expect(requestTokens(request, 'estimate')).toBe(2 + (4 + 2 + 2) + (4 + 1 + 1) + sent(spec('a')));
    expect(requestTokens({ messages: [], tools: [], toolChoice: 'none' }, 'estimate')).toBe(2);
  });
});

describe('imageSize', () => {
  it('reads width and height from a PNG header', () => {
    expect(imageSize(png(300, 200))).toEqual({ width: 300, height: 200 });
    expect(imageSize(png(1, 65_535))).toEqual({ width: 1, height: 65_535 });
  });

  it('reads all four bytes of a PNG dimension, as an unsigned number', () => {
    expect(imageSize(png(0x0001_2345, 0x0102_0304))).toEqual({ width: 0x0001_2345, height: 0x0102_0304 });
    expect(imageSize(png(0x8000_0001, 7))).toEqual({ width: 0x8000_0001, height: 7 });
  });

  it('decodes only the header: the data after it is not looked at', () => {
    expect(imageSize(`${png(640, 480)}%%% not base64 past the header %%%`)).toEqual({ width: 640, height: 480 });
  });

  it('reads a baseline JPEG frame after the segments before it', () => {
    expect(imageSize(jpeg(jfif, quantTable, frame(0xc0, 1920, 1080)))).toEqual({ width: 1920, height: 1080 });
  });

  it('reads the frame of any start-of-frame marker, C0 to CF', () => {
    for (const marker of [0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]) {
      expect(imageSize(jpeg(jfif, frame(marker, 300, 258))), `marker ${marker.toString(16)}`).toEqual({
        width: 300,
        height: 258,
      });
    }
  });

  it('skips the segments in C0..CF that are not frames: DHT (C4), JPG (C8), DAC (CC)', () => {
    for (const marker of [0xc4, 0xc8, 0xcc]) {
      expect(imageSize(jpeg(lookalike(marker), frame(0xc2, 800, 600))), `marker ${marker.toString(16)}`).toEqual({
        width: 800,
        height: 600,
      });
    }
  });

  it('does not take an application or table segment for the frame', () => {
    expect(imageSize(jpeg(lookalike(0xe1), lookalike(0xdb), frame(0xc0, 640, 480)))).toEqual({
      width: 640,
      height: 480,
    });
  });

  it('gives up on a JPEG without a frame, or whose segments lose their way', () => {
    expect(imageSize(jpeg(jfif, quantTable))).toBeUndefined();
    // The APP0 length says 3 bytes too many: the next "marker" is the quant table's body.
    const lost = [...jfif];
    lost[3] = (lost[3] ?? 0) + 3;
    const misplaced = [0x00, 0xc0, 0, 17, 8, 0, 16, 0, 32, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1];
    expect(imageSize(base64([0xff, 0xd8, ...lost, ...misplaced, 0xff, 0xd9]))).toBeUndefined();
  });

  it('knows neither GIF nor bytes that only start like a PNG or a JPEG', () => {
    const gif = base64([...'GIF89a'].map((c) => c.charCodeAt(0)).concat(Array(30).fill(1)));
    expect(imageSize(gif)).toBeUndefined();
    expect(imageSize('')).toBeUndefined();
    const pngTail = pngBytes(300, 200).slice(2);
    expect(imageSize(base64([0x89, 0x51, ...pngTail]))).toBeUndefined();
    expect(imageSize(base64([0x88, 0x50, ...pngTail]))).toBeUndefined();
    const jpegTail = [...jfif, ...frame(0xc0, 64, 64)];
    expect(imageSize(base64([0xff, 0xd9, ...jpegTail]))).toBeUndefined();
    expect(imageSize(base64([0xfe, 0xd8, ...jpegTail]))).toBeUndefined();
  });
});

describe('imageTokens: fit in 2048², short side to 768, 170 per 512px tile plus 85', () => {
  it('a 1024 x 1024 image is 4 tiles: 765 tokens (OpenAI’s example)', () => {
    expect(imageTokens(image(png(1024, 1024)))).toBe(765);
  });

  it('a 2048 x 4096 image is 768 x 1536 once scaled: 6 tiles, 1105 tokens (OpenAI’s example)', () => {
    expect(imageTokens(image(png(2048, 4096)))).toBe(1105);
    expect(imageTokens(image(png(4096, 2048)))).toBe(1105);
  });

  it('tiles the scaled size, rounding each side up to whole tiles', () => {
    // 1000 x 3000 → 768 x 2304: 2 x 5 tiles.
    expect(imageTokens(image(png(1000, 3000)))).toBe(10 * 170 + 85);
    // 1536 x 768 stays: 3 x 2 tiles.
    expect(imageTokens(image(png(1536, 768)))).toBe(6 * 170 + 85);
    // 768 x 768 stays: 2 x 2 tiles.
    expect(imageTokens(image(png(768, 768)))).toBe(765);
  });

  it('reads JPEG sizes too', () => {
    expect(imageTokens({ base64: jpeg(jfif, frame(0xc0, 3000, 1000)), mimeType: 'image/jpeg' })).toBe(10 * 170 + 85);
  });

  it('an image of unknown size costs 765, the price of a 1024² image', () => {
    expect(imageTokens(image(base64([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20])))).toBe(
      765,
    );
    expect(imageTokens(image(jpeg(jfif)))).toBe(765);
  });

  it('so does a PNG cut off before its size, or one that says it has no width or height', () => {
    const cut = base64(pngBytes(300, 200).slice(0, 12));
    expect(imageSize(cut)).toBeUndefined();
    expect(imageTokens(image(cut))).toBe(765);
    expect(imageTokens(image(png(0, 200)))).toBe(765);
    expect(imageTokens(image(png(300, 0)))).toBe(765);
  });
});

// A wrong image is the host's or a tool's mistake, but counting must not throw inside the reducer: the token
// budget would fail the whole run ("the reducer rejected an event"), and every later task of the run with it.
describe('image data that is not plain base64 is priced as an unknown image', () => {
  it('a data URL instead of bare base64', () => {
    expect(imageTokens(image(`data:image/png;base64,${png(1024, 1024)}`))).toBe(765);
  });

  it('text that is not base64 at all, or cut to a length base64 cannot have', () => {
    expect(imageTokens(image('not base64!'))).toBe(765);
    expect(imageTokens(image('AAAAA'))).toBe(765);
  });

  it('a run with a token budget and such an image sends its request', () => {
    const budgeted = stepWith({ maxInputTokens: 100_000 });
    const started = {
      type: 'started',
      input: 'what is on this page?',
      image: image('data:image/png;base64,iVBORw0KGgo='),
    } as const;
    const [state, effects] = budgeted(testConfig(), initialState(), started);
    expect(state.status).toBe('awaiting_llm');
    expect(ofType(effects, 'callLlm')).toHaveLength(1);
  });
});
