// OpenManus's sandbox_vision: the model looks at an image file of the run's sandbox (a chart Python
// drew, a screenshot), scaled down and sent as a JPEG with the observation. Any provider: local,
// Docker, Daytona.
import { posix } from 'node:path';
import { defineTool, err, type SandboxProvider, sandboxFor } from '@openmanus/core';
import { inside } from '@openmanus/core/internal';
import { z } from 'zod';
import { DEFAULT_IMAGE_LIMITS, type ImageLimits, imageForModel, sizeOf } from './imageForModel.js';

export interface SandboxVisionOptions {
  /** The sandbox the images are read from when the run has none of its own (one per run, shared with the tools given it). */
  readonly sandboxProvider?: SandboxProvider;
  /** The largest file, the most pixels, the box images are scaled into, the JPEG quality. */
  readonly limits?: Partial<ImageLimits>;
}

export function createSandboxVision(options: SandboxVisionOptions = {}) {
  const limits = { ...DEFAULT_IMAGE_LIMITS, ...options.limits };
  return defineTool({
    name: 'sandbox_vision',
    description: [
      'Look at an image file in the workspace (a chart you drew, a screenshot, a downloaded picture): it is',
      `attached to the result, scaled down to fit ${limits.maxWidth}×${limits.maxHeight}.`,
      `JPEG, PNG, GIF or BMP files of up to ${sizeOf(limits.maxBytes)}.`,
    ].join(' '),
    parameters: z.object({
      action: z.enum(['see_image']).default('see_image').describe('What to do: see_image, the only action.'),
      file_path: z
        .string()
        .min(1)
        .describe("The image's path: relative to the workspace (e.g. 'charts/sales.png'), or absolute inside it."),
    }),
    execute: async ({ file_path: path }, scope) => {
      const open = sandboxFor(scope, options.sandboxProvider);
      if (!open) return err('sandbox_vision reads images from the run’s sandbox, and this run has none.');
      const sandbox = await open();
      const target = posix.resolve(sandbox.workspace, path);
      if (!inside(sandbox.workspace, target))
        return err(`${path} is outside the workspace (${sandbox.workspace}); only images in it are read.`);
      // What is there, as its directory lists it: checked before anything is read.
      const entries = await sandbox.list(posix.dirname(target)).catch(() => []);
      const entry = target === sandbox.workspace ? undefined : entries.find((e) => e.name === posix.basename(target));
      if (target === sandbox.workspace || entry?.type === 'directory')
        return err(`${path} is a directory, not an image file.`);
      if (!entry) return err(`There is no file ${path} in the workspace.`);
      if (entry.type !== 'file')
        return err(`${path} is not a regular file (a link or a special file); nothing was read.`);
      if (entry.size > limits.maxBytes)
        return err(`${path} is ${sizeOf(entry.size)}; images of up to ${sizeOf(limits.maxBytes)} are read.`);
      const image = await imageForModel(await sandbox.readFile(target), limits);
      if (!image.isOk()) return err(`${path}: ${image.error}.`);
      const { format, width, height, sentWidth, sentHeight, sentBytes } = image.value;
      const scaled = sentWidth === width ? 'as' : `scaled down to ${sentWidth}×${sentHeight}, as`;
      return {
        output:
          `${path}: a ${width}×${height} ${format} image, attached ${scaled} a JPEG of ` +
          `${Math.ceil(sentBytes / 1024)} KB (a model that takes images sees it).`,
        image: image.value.image,
      };
    },
  });
}
