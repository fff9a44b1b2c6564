import type { ElicitRequestURLParams, UrlElicitationRequiredError } from '@modelcontextprotocol/sdk/types.js';
import type { ToolScope } from '@openmanus/core';
import { messageOf } from './connection.js';
import { urlRequestOf } from './serverRequests.js';

/** The most URLs one "open these first" answer of a server may put to a person. */
export const MAX_REQUIRED_URLS = 5;

/**
 * A call the server answered with "open these URLs first" (-32042, URLElicitationRequired): each URL
 * goes to the person as the server's URL question (`scope.elicit`, bounded as one sent mid-call).
 * `undefined` when they agreed to every one (the call is then made again, once), else why not.
 */
export async function openRequiredUrls(
  failure: UrlElicitationRequiredError,
  scope: ToolScope,
  server: string,
): Promise<string | undefined> {
  const named = `the MCP server "${server}"`;
  const asked: unknown = failure.elicitations;
  if (!Array.isArray(asked) || asked.length === 0) return `${named} asked for URLs to be opened first, and named none`;
  if (asked.length > MAX_REQUIRED_URLS)
    return `${named} asked for ${asked.length} URLs to be opened first (at most ${MAX_REQUIRED_URLS} are put to a person)`;
  for (const params of asked as unknown[]) {
    const { url, elicitationId, message } = (params ?? {}) as Partial<ElicitRequestURLParams>;
    if (typeof url !== 'string' || typeof elicitationId !== 'string' || typeof message !== 'string')
      return `${named} asked for a URL to be opened first without a url, elicitationId and message`;
    let request: ReturnType<typeof urlRequestOf>;
    try {
      request = urlRequestOf({ mode: 'url', url, elicitationId, message }, server);
    } catch (refused) {
      return `${named} asked for a URL to be opened first that was refused: ${messageOf(refused)}`;
    }
    const answer = await scope.elicit(request);
    if (answer.action !== 'accept') {
      const why = answer.action === 'decline' ? 'the person declined' : 'nobody agreed to it';
      return `${named} needs ${request.url} opened first (${cutMessage(request.message)}), and ${why}`;
    }
  }
  return undefined;
}

const cutMessage = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);
