import type { TokenizerName } from './agent.js';
import type { LlmRequest } from './effects.js';
import type { ImageData, Message } from './messages.js';
import type { ToolSpec } from './tool.js';

interface Encoder {
  encode(text: string, allowedSpecial?: string[] | 'all', disallowedSpecial?: string[] | 'all'): number[];
}

// Rank tables are megabytes of data: they are imported on first need, never at module load.
const encoders = new Map<TokenizerName, Encoder>();

/** Loads a tokenizer's ranks; the interpreter awaits this before a run that has a token budget. */
export async function loadTokenizer(name: TokenizerName): Promise<void> {
  if (name === 'estimate' || encoders.has(name)) return;
  const [{ Tiktoken }, ranks] = await Promise.all([
    import('js-tiktoken/lite'),
    name === 'o200k_base' ? import('js-tiktoken/ranks/o200k_base') : import('js-tiktoken/ranks/cl100k_base'),
  ]);
  encoders.set(name, new Tiktoken(ranks.default));
}

/** Whether counts with `name` are exact now (its ranks are loaded); the reducer estimates otherwise. */
export const tokenizerReady = (name: TokenizerName): boolean => name === 'estimate' || encoders.has(name);

export function textTokens(text: string, tokenizer: TokenizerName): number {
  if (text.length === 0) return 0;
  if (tokenizer === 'estimate') return Math.ceil(text.length / 4);
  const encoder = encoders.get(tokenizer);
  if (!encoder) throw new Error(`tokenizer "${tokenizer}" is not loaded: await loadTokenizer('${tokenizer}') first`);
  // Text that quotes a special token ("<|endoftext|>") is counted as plain text, never refused.
  return encoder.encode(text, [], []).length;
}

// Messages are immutable, so a count made once holds for the message's whole life.
const messageMemo: Record<TokenizerName, WeakMap<Message, number>> = {
  cl100k_base: new WeakMap(),
  o200k_base: new WeakMap(),
  estimate: new WeakMap(),
};
const toolsMemo: Record<TokenizerName, WeakMap<readonly ToolSpec[], number>> = {
  cl100k_base: new WeakMap(),
  o200k_base: new WeakMap(),
  estimate: new WeakMap(),
};

/** Tokens of one message, counted the way OpenManus does (4 per message plus its fields). */
export function messageTokens(message: Message, tokenizer: TokenizerName): number {
  const memo = messageMemo[tokenizer];
  const known = memo.get(message);
  if (known !== undefined) return known;
  let total = 4 + textTokens(message.role, tokenizer) + textTokens(message.content, tokenizer);
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      total += textTokens(call.name, tokenizer) + textTokens(call.arguments, tokenizer);
    }
  }
  if (message.role === 'tool') {
    total += textTokens(message.name, tokenizer) + textTokens(message.toolCallId, tokenizer);
  }
  if ((message.role === 'tool' || message.role === 'user') && message.image) total += imageTokens(message.image);
  memo.set(message, total);
  return total;
}

export function toolSpecTokens(tools: readonly ToolSpec[], tokenizer: TokenizerName): number {
  const memo = toolsMemo[tokenizer];
  const known = memo.get(tools);
  if (known !== undefined) return known;
  let total = 0;
  for (const tool of tools) {
    total += textTokens(
      JSON.stringify({
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
      }),
      tokenizer,
    );
  }
  memo.set(tools, total);
  return total;
}

/** Input tokens of a whole request: linear in the number of new messages thanks to the memo. */
export function requestTokens(request: LlmRequest, tokenizer: TokenizerName): number {
  let total = 2;
  for (const message of request.messages) total += messageTokens(message, tokenizer);
  return total + toolSpecTokens(request.tools, tokenizer);
}

/** OpenAI's high-detail rule: fit in 2048², short side to 768, 170 per 512px tile plus 85. */
export function imageTokens(image: ImageData): number {
  const size = imageSize(image.base64);
  // A side of 0 cannot be scaled (768 / 0): priced as an unknown image, like a header that says nothing.
  if (!size || size.width === 0 || size.height === 0) return 765;
  let { width, height } = size;
  const fit = Math.min(1, 2048 / Math.max(width, height));
  width *= fit;
  height *= fit;
  const shrink = 768 / Math.min(width, height);
  width *= shrink;
  height *= shrink;
  return Math.ceil(width / 512) * Math.ceil(height / 512) * 170 + 85;
}

function bytesOf(base64: string, maxBytes: number): Uint8Array {
  let binary: string;
  try {
    binary = atob(base64.slice(0, Math.ceil(maxBytes / 3) * 4));
  } catch {
    return new Uint8Array(0); // not plain base64 (a data URL, text): priced as an unknown image
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Width and height from a PNG or JPEG header, without decoding the image. */
export function imageSize(base64: string): { width: number; height: number } | undefined {
  const head = bytesOf(base64, 24);
  const be16 = (b: Uint8Array, i: number) => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
  if (head[0] === 0x89 && head[1] === 0x50) {
    if (head.length < 24) return undefined; // cut off before the size
    const be32 = (i: number) => ((be16(head, i) << 16) | be16(head, i + 2)) >>> 0;
    return { width: be32(16), height: be32(20) };
  }
  if (head[0] !== 0xff || head[1] !== 0xd8) return undefined;
  const bytes = bytesOf(base64, 65536);
  let i = 2;
  while (i + 9 < bytes.length) {
    if (bytes[i] !== 0xff) return undefined;
    const marker = bytes[i + 1] ?? 0;
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: be16(bytes, i + 5), width: be16(bytes, i + 7) };
    }
    i += 2 + be16(bytes, i + 2);
  }
  return undefined;
}
