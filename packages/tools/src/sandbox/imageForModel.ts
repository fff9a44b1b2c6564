// An image file made fit for a model: checked from its header before anything is decoded (a small
// file can claim enormous dimensions), then scaled down to fit a box and sent as a JPEG.
import { err, type ImageData, ok, type Result } from '@openmanus/core';
import { imageSize } from 'image-size';
import { pngDataProblem } from './pngData.js';

export interface ImageLimits {
  /** Largest file read, in bytes (default 10 MiB, as OpenManus's sandbox_vision). */
  readonly maxBytes: number;
  /** Most pixels decoded (default 25 million: a 5000×5000 image); bigger images are refused unread. */
  readonly maxPixels: number;
  /** The box the image is scaled down into (default 1920×1080, never scaled up). */
  readonly maxWidth: number;
  readonly maxHeight: number;
  /** JPEG quality, 1–100 (default 85). */
  readonly quality: number;
}

export const DEFAULT_IMAGE_LIMITS: ImageLimits = {
  maxBytes: 10 * 1024 * 1024,
  maxPixels: 25_000_000,
  maxWidth: 1920,
  maxHeight: 1080,
  quality: 85,
};

/** The formats decoded, by the name the header check gives them. */
const DECODED: Readonly<Record<string, string>> = { png: 'PNG', jpg: 'JPEG', gif: 'GIF', bmp: 'BMP' };
const SUPPORTED = 'JPEG, PNG, GIF or BMP';

export interface ModelImage {
  readonly image: ImageData;
  /** The file's format and size. */
  readonly format: string;
  readonly width: number;
  readonly height: number;
  /** The size sent. */
  readonly sentWidth: number;
  readonly sentHeight: number;
  readonly sentBytes: number;
}

/** A size as people read it. */
export const sizeOf = (bytes: number) =>
  bytes < 1024
    ? `${bytes} bytes`
    : bytes < 1024 * 1024
      ? `${(bytes / 1024).toFixed(1)} KB`
      : `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** `bytes` as a JPEG within `limits`, or why it cannot be one. */
export async function imageForModel(
  bytes: Uint8Array,
  limits: ImageLimits = DEFAULT_IMAGE_LIMITS,
): Promise<Result<ModelImage, string>> {
  if (bytes.length > limits.maxBytes)
    return err(`the file is ${sizeOf(bytes.length)}; images of up to ${sizeOf(limits.maxBytes)} are read`);
  let header: ReturnType<typeof imageSize>;
  try {
    header = imageSize(bytes);
  } catch {
    return err(`not an image (it is not ${SUPPORTED})`);
  }
  const format = DECODED[header.type ?? ''];
  if (!format) return err(`a ${(header.type ?? 'unknown').toUpperCase()} image, which is not read: only ${SUPPORTED}`);
  const { width, height } = header;
  if (width * height > limits.maxPixels)
    return err(`${width}×${height} pixels is more than the ${limits.maxPixels.toLocaleString('en')} pixels read`);

  const damaged = header.type === 'png' ? pngDataProblem(bytes) : undefined;
  if (damaged) return err(`the PNG image ${damaged}`);

  // Loaded on first use: a run that never looks at an image never loads the decoders.
  const { Jimp } = await import('jimp');
  let decoded: Awaited<ReturnType<typeof Jimp.fromBuffer>>;
  try {
    decoded = await Jimp.fromBuffer(Buffer.from(bytes));
  } catch (error) {
    return err(`the ${format} image could not be decoded: ${(error as Error).message}`);
  }
  if (decoded.width > limits.maxWidth || decoded.height > limits.maxHeight)
    decoded.scaleToFit({ w: limits.maxWidth, h: limits.maxHeight });
  // JPEG has no transparency: transparent parts show as on a white page.
  const flat = new Jimp({ width: decoded.width, height: decoded.height, color: 0xffffffff }).composite(decoded);
  const jpeg = await flat.getBuffer('image/jpeg', { quality: limits.quality });
  return ok({
    image: { base64: jpeg.toString('base64'), mimeType: 'image/jpeg' },
    format,
    width,
    height,
    sentWidth: flat.width,
    sentHeight: flat.height,
    sentBytes: jpeg.length,
  });
}
