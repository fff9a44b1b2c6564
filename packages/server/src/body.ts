import { RequestRefusedError } from './runs.js';

/**
 * The request's JSON body, read up to `limit` bytes: a longer one is refused (413) as soon as it
 * passes the limit, without reading the rest; one that is not JSON gets a 400.
 */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > limit) throw new RequestRefusedError(413, `the body is larger than ${limit} bytes`);
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      // Not cancelled: on Node that would cut the connection before the client reads the answer.
      if (size > limit) throw new RequestRefusedError(413, `the body is larger than ${limit} bytes`);
      chunks.push(value);
    }
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new RequestRefusedError(400, 'the body is not valid JSON');
  }
}
