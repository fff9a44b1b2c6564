// sandbox_vision: images Python drew inside the run's sandbox, read by path, checked, scaled down to
// a JPEG and sent to a model that takes images — in a local sandbox and in a Docker container
// (the real daemon); refusals for what is not a readable image.
import {
  createLocalSandboxProvider,
  createOpenAiLlm,
  err,
  type ImageData,
  run,
  type Sandbox,
  type SandboxProvider,
  type ToolOutput,
} from '@openmanus/core';
import { startOpenAiServer } from '@openmanus/core/testing';
import { Jimp } from 'jimp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDockerSandboxProvider } from '../../sandbox/src/dockerProvider.js';
import { dockerReady, SETUP_TIMEOUT, TEST_IMAGE } from '../../sandbox/test/docker.js';
import { createSandboxManus } from '../src/agents/sandboxManus.js';
import { createSandboxVision } from '../src/sandbox/sandboxVision.js';
import { directRun, tempWorkspace } from './helpers.js';
import { PNG_WRITER } from './pngWriter.js';

/** A sandbox of `provider`, and a provider that gives the tool that same sandbox. */
async function sandboxOf(provider: SandboxProvider) {
  const sandbox = await provider.create({ runId: 'vision', signal: new AbortController().signal });
  const reads: string[] = [];
  const shared: SandboxProvider = {
    name: provider.name,
    create: async () => ({
      ...sandbox,
      readFile: (path) => {
        reads.push(path);
        return sandbox.readFile(path);
      },
      close: async () => {},
    }),
  };
  const python = async (code: string) => {
    const result = await sandbox.exec(['python3', '-c', `${PNG_WRITER}\n${code}`], { timeoutMs: 30_000 });
    if (result.exitCode !== 0) throw new Error(result.stderr);
  };
  return { sandbox, shared, reads, python };
}

const pixel = (image: Awaited<ReturnType<typeof Jimp.read>>, x: number, y: number) => {
  const color = image.getPixelColor(x, y);
  return [(color >>> 24) & 255, (color >>> 16) & 255, (color >>> 8) & 255];
};

const jpegOf = async (image: ImageData | undefined) => {
  expect(image?.mimeType).toBe('image/jpeg');
  const bytes = Buffer.from(image?.base64 ?? '', 'base64');
  expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  return Jimp.read(bytes);
};

describe.each([
  ['local', async () => createLocalSandboxProvider({ workspace: await tempWorkspace(), isolation: 'none' })],
  [
    'docker',
    async () => {
      await dockerReady();
      return createDockerSandboxProvider({ image: TEST_IMAGE, workspace: await tempWorkspace() });
    },
  ],
])('sandbox_vision in a %s sandbox', (_name, makeProvider) => {
  let box: Awaited<ReturnType<typeof sandboxOf>>;
  let sandbox: Sandbox;
  beforeAll(async () => {
    box = await sandboxOf(await makeProvider());
    sandbox = box.sandbox;
  }, SETUP_TIMEOUT);
  afterAll(() => sandbox?.close());

  it('reads a PNG Python drew, by a path relative to the workspace or absolute in it, as a scaled-down JPEG', async () => {
    await box.python('half_red("charts/wide.png", 3000, 600)');
    const vision = directRun(createSandboxVision({ sandboxProvider: box.shared }), sandbox.workspace);
    for (const path of ['charts/wide.png', `${sandbox.workspace}/charts/wide.png`]) {
      const result = (await vision.call({ action: 'see_image', file_path: path })) as ToolOutput;
      expect(result.output).toMatch(
        new RegExp(`^${path}: a 3000×600 PNG image, attached scaled down to 1920×384, as a JPEG of \\d+ KB`),
      );
      const jpeg = await jpegOf(result.image);
      expect([jpeg.width, jpeg.height]).toEqual([1920, 384]);
      // The red half stays red; the transparent half is white, as on a page.
      const [r = 0, g = 0, b = 0] = pixel(jpeg, 300, 200);
      expect(r).toBeGreaterThan(240);
      expect(g + b).toBeLessThan(30);
      expect(pixel(jpeg, 1700, 200).every((channel) => channel > 240)).toBe(true);
    }
    // `action` may be left out: see_image is the only one.
    const small = (await vision.call({ file_path: 'charts/wide.png' })) as ToolOutput;
    expect(small.image).toBeDefined();
    await vision.close();
  });

  it('reads an interlaced PNG', async () => {
    await box.python('interlaced("woven.png", 9, 7)');
    const vision = directRun(createSandboxVision({ sandboxProvider: box.shared }), sandbox.workspace);
    const result = (await vision.call({ file_path: 'woven.png' })) as ToolOutput;
    expect(result.output).toMatch(/^woven\.png: a 9×7 PNG image, attached as a JPEG/);
    const [r = 0, g = 0, b = 0] = pixel(await jpegOf(result.image), 4, 3);
    expect(b).toBeGreaterThan(200);
    expect(r + g).toBeLessThan(60);
  });

  it('keeps a small image at its size', async () => {
    await box.python('half_red("small.png", 40, 30)');
    const vision = directRun(createSandboxVision({ sandboxProvider: box.shared }), sandbox.workspace);
    const result = (await vision.call({ file_path: 'small.png' })) as ToolOutput;
    expect(result.output).toMatch(/^small\.png: a 40×30 PNG image, attached as a JPEG of 1 KB/);
    const jpeg = await jpegOf(result.image);
    expect([jpeg.width, jpeg.height]).toEqual([40, 30]);
  });

  it('refuses what is not an image it can read, with a clear error, reading nothing it need not', async () => {
    await box.python(
      [
        'open("notes.txt", "w").write("just text")',
        'half_red("big.png", 2000, 2000)',
        // A tiny file whose header claims 60000×60000 pixels: refused before anything is decoded.
        'png("bomb.png", 60000, 60000, b"", idat=zlib.compress(b"\\x00" * 64))',
        'png("broken.png", 20, 20, b"", idat=b"not zlib data")',
        // Less pixel data than the header promises: its decoder would fill the rest from uninitialised memory.
        'png("short.png", 64, 64, b"", idat=zlib.compress(b"\\x00" * 300))',
        'interlaced("cut.png", 9, 7, cut=5)',
        // A WebP's header (a 64×48 lossy frame): a format this tool does not decode.
        'open("photo.webp", "wb").write(b"RIFF\\x24\\x00\\x00\\x00WEBPVP8 \\x18\\x00\\x00\\x00\\x30\\x01\\x00\\x9d\\x01\\x2a\\x40\\x00\\x30\\x00" + bytes(14))',
        'import os; os.makedirs("folder", exist_ok=True); os.symlink("/etc/passwd", "link.png")',
      ].join('\n'),
    );
    const vision = directRun(
      createSandboxVision({ sandboxProvider: box.shared, limits: { maxBytes: 2000 } }),
      sandbox.workspace,
    );
    const refusal = async (path: string) => {
      const returned = await vision.call({ action: 'see_image', file_path: path });
      expect(returned).toMatchObject(err(expect.any(String)));
      return String((returned as { error: string }).error);
    };
    box.reads.length = 0;
    expect(await refusal('notes.txt')).toBe('notes.txt: not an image (it is not JPEG, PNG, GIF or BMP).');
    expect(await refusal('big.png')).toMatch(/^big\.png is \d+\.\d KB; images of up to 2\.0 KB are read\.$/);
    expect(box.reads.map((path) => path.split('/').at(-1))).toEqual(['notes.txt']);
    expect(await refusal('bomb.png')).toBe('bomb.png: 60000×60000 pixels is more than the 25,000,000 pixels read.');
    expect(await refusal('broken.png')).toMatch(
      /^broken\.png: the PNG image has pixel data that is not valid compressed data \(.+\)\.$/,
    );
    expect(await refusal('short.png')).toBe('short.png: the PNG image has incomplete pixel data (300 of 16448 bytes).');
    expect(await refusal('cut.png')).toMatch(
      /^cut\.png: the PNG image has incomplete pixel data \((\d+) of \d+ bytes\)\.$/,
    );
    expect(await refusal('photo.webp')).toBe(
      'photo.webp: a WEBP image, which is not read: only JPEG, PNG, GIF or BMP.',
    );
    expect(await refusal('missing.png')).toBe('There is no file missing.png in the workspace.');
    expect(await refusal('folder')).toBe('folder is a directory, not an image file.');
    expect(await refusal('.')).toBe('. is a directory, not an image file.');
    expect(await refusal('link.png')).toBe(
      'link.png is not a regular file (a link or a special file); nothing was read.',
    );
    expect(await refusal('../outside.png')).toMatch(/^\.\.\/outside\.png is outside the workspace/);
    expect(await refusal('/etc/passwd')).toMatch(/^\/etc\/passwd is outside the workspace/);
    await vision.close();
  });
});

describe('sandbox_vision in a run', () => {
  it('has no sandbox to read from without one', async () => {
    const vision = directRun(createSandboxVision(), await tempWorkspace());
    expect(await vision.call({ file_path: 'a.png' })).toMatchObject(err(expect.stringMatching(/has none/)));
  });

  it.each([
    [true, 'sends the image to a model that takes images, after the tool results'],
    [false, 'sends only the text to a model that does not'],
  ])('vision %s: %s', async (vision) => {
    const workspace = await tempWorkspace();
    const agent = createSandboxManus({
      sandbox: createLocalSandboxProvider({ workspace, isolation: 'none' }),
      workspace,
    });
    const server = await startOpenAiServer({
      script: [
        {
          toolCalls: [{ name: 'python_execute', arguments: { code: `${PNG_WRITER}\nhalf_red("plot.png", 64, 48)` } }],
        },
        { toolCalls: [{ name: 'sandbox_vision', arguments: { action: 'see_image', file_path: 'plot.png' } }] },
        { toolCalls: [{ name: 'terminate', arguments: { status: 'success' } }] },
      ],
    });
    try {
      const llm = createOpenAiLlm({
        model: 'gpt-4o',
        apiKey: 'sk-test',
        baseURL: server.baseURL,
        maxRetries: 0,
        vision,
      });
      const outcome = await run(agent, 'Draw a plot and look at it', { llm });
      expect(outcome.finishReason).toBe('terminated');
      const messages = server.requests.at(-1)?.messages ?? [];
      const observation = messages.filter((m) => m.role === 'tool').at(-1);
      expect(String(observation?.content)).toMatch(/^plot\.png: a 64×48 PNG image, attached as a JPEG/);
      const images = messages.flatMap((m) =>
        Array.isArray(m.content)
          ? (m.content as { type: string; image_url?: { url: string } }[]).filter((part) => part.type === 'image_url')
          : [],
      );
      if (!vision) return expect(images).toEqual([]);
      expect(images).toHaveLength(1);
      const url = images[0]?.image_url?.url ?? '';
      expect(url).toMatch(/^data:image\/jpeg;base64,/);
      const jpeg = await jpegOf({ mimeType: 'image/jpeg', base64: url.slice(url.indexOf(',') + 1) });
      expect([jpeg.width, jpeg.height]).toEqual([64, 48]);
    } finally {
      await server.close();
    }
  });
});
