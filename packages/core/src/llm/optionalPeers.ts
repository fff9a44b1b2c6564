// biome-ignore-all lint/suspicious/noTsIgnore: @ts-expect-error fails where the peer is installed (below)
// The types of optional peer dependencies that our public options name: the AI SDK's model, the
// Anthropic client and the Bedrock client. Each export is spared its "cannot find module" error, so
// that a project without the peer still type-checks our declarations with skipLibCheck off (the type
// is `any` there, where nothing of the peer's is passed); with the peer installed the types are its
// own. The directives are JSDoc comments because those are the ones tsc keeps in the .d.ts, where
// they are needed; @ts-expect-error would not do, as it fails where the peer is installed.

/** @ts-ignore -- an optional peer */
export type { LanguageModelV3, LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
/** @ts-ignore -- an optional peer */
export type { default as Anthropic } from '@anthropic-ai/sdk';
/** @ts-ignore -- an optional peer */
export type { BedrockRuntimeClient, BedrockRuntimeClientConfig } from '@aws-sdk/client-bedrock-runtime';
