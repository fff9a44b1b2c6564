import { randomUUID } from 'node:crypto';
import { type Artifact, type Message, type Part, Role, type Task, type TaskState } from '@a2a-js/sdk';

// The SDK's types are its protobuf messages: every field present. These fill in the empty ones.

export const textPart = (text: string): Part => ({
  content: { $case: 'text', value: text },
  mediaType: 'text/plain',
  filename: '',
  metadata: {},
});

export const dataPart = (value: unknown): Part => ({
  content: { $case: 'data', value },
  mediaType: 'application/json',
  filename: '',
  metadata: {},
});

export const filePart = (bytes: Buffer, filename: string, mediaType: string): Part => ({
  content: { $case: 'raw', value: bytes },
  mediaType,
  filename,
  metadata: {},
});

/** A message from the agent on task `taskId`; `messageId` is given when it must be the same each time it is made. */
export function agentMessage(
  taskId: string,
  contextId: string,
  parts: readonly Part[],
  messageId: string = randomUUID(),
): Message {
  return {
    messageId,
    taskId,
    contextId,
    role: Role.ROLE_AGENT,
    parts: [...parts],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

export function artifact(artifactId: string, name: string, parts: readonly Part[], description = ''): Artifact {
  return { artifactId, name, description, parts: [...parts], metadata: {}, extensions: [] };
}

export const status = (state: TaskState, message?: Message): Task['status'] => ({
  state,
  message,
  timestamp: new Date().toISOString(),
});

/** The text of a message: its text parts, in order, one per line. */
export const textOf = (message: Message): string =>
  message.parts
    .flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []))
    .join('\n')
    .trim();

/** The first data part of a message that is a JSON object. */
export function dataOf(message: Message): Readonly<Record<string, unknown>> | undefined {
  for (const part of message.parts) {
    const value: unknown = part.content?.$case === 'data' ? part.content.value : undefined;
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  }
  return undefined;
}
