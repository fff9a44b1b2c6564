// pngjs (jimp's PNG decoder) fills what a PNG's pixel stream lacks from uninitialised memory: a
// file whose compressed pixels are shorter than its header promises can decode "successfully"
// into bytes of this process's heap, which would then be shown to the model. So a PNG is decoded
// only once its pixel stream has been inflated here (node's zlib) and found whole.
import { constants, inflateSync } from 'node:zlib';

/** Samples per pixel, by PNG colour type. */
const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7's seven passes: first column, first row, column step, row step. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly colorType: number;
  readonly interlaced: boolean;
}

/** The bytes the pixel stream inflates to: each row a filter byte and its samples. */
function pixelStreamLength({ width, height, depth, colorType, interlaced }: PngHeader): number | undefined {
  const channels = CHANNELS[colorType];
  if (channels === undefined) return undefined;
  const rowBytes = (columns: number) => Math.ceil((columns * channels * depth) / 8) + 1;
  if (!interlaced) return rowBytes(width) * height;
  let total = 0;
  for (const [x, y, dx, dy] of ADAM7) {
    const columns = Math.ceil((width - x) / dx);
    const rows = Math.ceil((height - y) / dy);
    if (columns > 0 && rows > 0) total += rowBytes(columns) * rows;
  }
  return total;
}

/** Why a PNG's pixel data cannot be decoded safely, or undefined when it is whole. */
export function pngDataProblem(png: Uint8Array): string | undefined {
  const bytes = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  let header: PngHeader | undefined;
  const data: Buffer[] = [];
  let offset = 8;
  for (;;) {
    if (offset + 8 > bytes.length) return 'is cut short (it has no end chunk)';
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    if (body.length < length) return 'is cut short';
    if (type === 'IHDR' && length >= 13) {
      header = {
        width: body.readUInt32BE(0),
        height: body.readUInt32BE(4),
        depth: body.readUInt8(8),
        colorType: body.readUInt8(9),
        interlaced: body.readUInt8(12) === 1,
      };
    }
    if (type === 'IDAT') data.push(body);
    if (type === 'IEND') break;
    offset += 12 + length;
  }
  const expected = header && pixelStreamLength(header);
  if (expected === undefined) return 'has no valid header';
  let inflated: Buffer;
  try {
    // What a stream cut short inflates to is kept (and measured) rather than thrown away.
    inflated = inflateSync(Buffer.concat(data), { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: expected });
  } catch (error) {
    // More pixel data than the header needs is cut off by the decoder: whole enough.
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return undefined;
    return `has pixel data that is not valid compressed data (${(error as Error).message})`;
  }
  if (inflated.length < expected) return `has incomplete pixel data (${inflated.length} of ${expected} bytes)`;
  return undefined;
}
