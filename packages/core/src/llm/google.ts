import { lazyPromise } from '../lazyModule.js';
import { messageOf } from '../messageOf.js';
import { err } from '../result.js';
import { type AiSdkLlmOptions, fromAiSdk } from './aiSdk.js';
import { limitConcurrency } from './concurrency.js';
import { type LlmPort, portComplete } from './llm.js';
import { portLimitsOf } from './portOptions.js';

export interface GoogleLlmOptions extends Omit<AiSdkLlmOptions, 'model' | 'promptCacheKey'> {
  /** The Gemini model, e.g. `gemini-2.5-flash`. */
  readonly model: string;
  /** Default the `GOOGLE_GENERATIVE_AI_API_KEY` environment variable. */
  readonly apiKey?: string | undefined;
  /** Default Google's `https://generativelanguage.googleapis.com/v1beta`. */
  readonly baseURL?: string | undefined;
}

/**
 * The LLM port on Google's Gemini API, through the AI SDK's Google provider (`@ai-sdk/google`, an
 * optional peer dependency, loaded on the first request): `fromAiSdk` over its model.
 */
export function createGoogleLlm(options: GoogleLlmOptions): LlmPort {
  const { model, apiKey, baseURL, ...rest } = options;
  // Checked now, though the model's port is made on the first request.
  const limits = portLimitsOf(rest);
  let ready: LlmPort | undefined;
  const connect = lazyPromise(async (): Promise<LlmPort> => {
    const { createGoogleGenerativeAI } = await import('@ai-sdk/google');
    const google = createGoogleGenerativeAI({
      ...(apiKey !== undefined ? { apiKey } : {}),
      ...(baseURL !== undefined ? { baseURL } : {}),
    });
    // The limit on requests in flight is this port's (below): the model's port is made on the first one.
    ready = fromAiSdk(google(model), { ...rest, maxConcurrentRequests: Number.POSITIVE_INFINITY });
    return ready;
  });
  const port: LlmPort = {
    model,
    complete: portComplete(async (request, callOptions) => {
      try {
        ready ??= await connect();
      } catch (error) {
        return err({
          kind: 'config',
          message: `the Google provider (@ai-sdk/google) could not be loaded: ${messageOf(error)}`,
        });
      }
      return ready.complete(request, callOptions);
    }),
  };
  return limitConcurrency(port, limits.maxConcurrentRequests);
}
