import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CompleteRequestSchema,
  type CompleteResult,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { enumOptions, type McpPrompt, parsePromptArgs, promptListing, toPromptResult } from './catalogPrompts.js';
import {
  asMcpError,
  CatalogError,
  type CatalogScope,
  type CompiledTemplate,
  type Completer,
  checkLength,
  compileTemplate,
  type McpResource,
  type McpResourceTemplate,
  matchTemplate,
  notFound,
  resourceListing,
  templateListing,
  toReadResult,
} from './catalogResources.js';

/** A list given once, or asked for each time (for lists that change: say so with the `notify…Changed` methods). */
export type Listed<T> = readonly T[] | (() => readonly T[]);

/** What an MCP server serves besides tools: resources, resource templates, prompts, and completion of their arguments. */
export interface CatalogOptions {
  readonly resources?: Listed<McpResource>;
  readonly resourceTemplates?: Listed<McpResourceTemplate>;
  readonly prompts?: Listed<McpPrompt>;
  /** The most bytes a read or a prompt may give (default 10 MB); a bigger one is an MCP error saying so. */
  readonly maxResourceBytes?: number;
  /** The longest template variable, prompt argument or value to complete, in characters (default 10,000). */
  readonly maxArgumentLength?: number;
}

/** Telling the connected clients that something of the catalog changed. */
export interface CatalogNotifier {
  /** `notifications/resources/updated` to each session subscribed to `uri`. */
  notifyResourceUpdated(uri: string): Promise<void>;
  /** `notifications/resources/list_changed` to every session: the resources or templates are not what they were. */
  notifyResourcesChanged(): Promise<void>;
  /** `notifications/prompts/list_changed` to every session. */
  notifyPromptsChanged(): Promise<void>;
}

export interface Catalog {
  /** Adds the catalog's handlers and capabilities to a session's server (openSession's `configure`); none for an empty catalog. */
  readonly configure?: (server: Server) => void;
  readonly notifier: CatalogNotifier;
}

const nothingToNotify: CatalogNotifier = {
  notifyResourceUpdated: async () => {},
  notifyResourcesChanged: async () => {},
  notifyPromptsChanged: async () => {},
};

export const DEFAULT_MAX_RESOURCE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_ARGUMENT_LENGTH = 10_000;
/** A URI longer than this is refused before it is matched against any template. */
const MAX_URI_LENGTH = 65_536;
/** Subscriptions one session may hold. */
const MAX_SUBSCRIPTIONS = 1_000;
/** MCP's limit on the values of one completion. */
const MAX_COMPLETIONS = 100;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const scopeOf = (extra: Extra): CatalogScope => ({
  signal: extra.signal,
  ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}),
});

/** A session's server and what it subscribed to. */
interface Attached {
  readonly server: Server;
  readonly subscriptions: Set<string>;
  /** Seen connected: once its transport is gone, the session has ended. */
  connected: boolean;
}

function uniqueBy<T>(items: readonly T[], key: (item: T) => string, what: string): void {
  const seen = new Set<string>();
  for (const item of items) {
    const name = key(item);
    if (seen.has(name)) throw new Error(`Two ${what} are named ${name}`);
    seen.add(name);
  }
}

/** The resources, templates and prompts of `options` as handlers for each session's server, and the means to notify the sessions. */
export function createCatalog(options: CatalogOptions & { readonly onError?: (error: Error) => void }): Catalog {
  const { resources, resourceTemplates, prompts } = options;
  if (resources === undefined && resourceTemplates === undefined && prompts === undefined) {
    return { notifier: nothingToNotify };
  }
  const maxBytes = options.maxResourceBytes ?? DEFAULT_MAX_RESOURCE_BYTES;
  const maxArgumentLength = options.maxArgumentLength ?? DEFAULT_MAX_ARGUMENT_LENGTH;
  const onError = options.onError ?? (() => {});

  // Templates are parsed once per list given (a list asked for each time is parsed when it changes).
  const compiled = new WeakMap<readonly McpResourceTemplate[], CompiledTemplate[]>();
  const current = {
    resources(): readonly McpResource[] {
      const list = typeof resources === 'function' ? resources() : (resources ?? []);
      uniqueBy(list, (resource) => resource.uri, 'resources');
      return list;
    },
    templates(): CompiledTemplate[] {
      const list = typeof resourceTemplates === 'function' ? resourceTemplates() : (resourceTemplates ?? []);
      let parsed = compiled.get(list);
      if (!parsed) {
        uniqueBy(list, (template) => template.uriTemplate, 'resource templates');
        parsed = list.map(compileTemplate);
        compiled.set(list, parsed);
      }
      return parsed;
    },
    prompts(): readonly McpPrompt[] {
      const list = typeof prompts === 'function' ? prompts() : (prompts ?? []);
      uniqueBy(list, (prompt) => prompt.name, 'prompts');
      return list;
    },
  };
  // Lists given once are checked now, so that a mistake shows when the server is made.
  if (typeof resources !== 'function') current.resources();
  if (typeof resourceTemplates !== 'function') current.templates();
  if (typeof prompts !== 'function') current.prompts();

  /** What `uri` names: a resource, or a template's resource with its variables. */
  const resolve = (uri: string) => {
    checkLength('The URI', uri, MAX_URI_LENGTH);
    const resource = current.resources().find((candidate) => candidate.uri === uri);
    if (resource) return { resource } as const;
    for (const entry of current.templates()) {
      const vars = matchTemplate(entry, uri, maxArgumentLength);
      if (vars) return { template: entry.template, vars } as const;
    }
    throw notFound(uri);
  };

  const complete = async (
    completer: Completer | undefined,
    choices: readonly string[] | undefined,
    value: string,
    context: Readonly<Record<string, string>>,
    what: string,
  ): Promise<CompleteResult> => {
    checkLength(`The value to complete of ${what}`, value, maxArgumentLength);
    for (const [name, filled] of Object.entries(context))
      checkLength(`The argument ${name} given`, filled, maxArgumentLength);
    let values: readonly string[];
    if (completer) {
      try {
        values = await completer(value, { arguments: context });
      } catch (error) {
        throw asMcpError(`Completing ${what} failed`, error);
      }
      if (!Array.isArray(values) || values.some((item) => typeof item !== 'string')) {
        throw new CatalogError(ErrorCode.InternalError, `Completing ${what} gave something other than strings`);
      }
    } else values = (choices ?? []).filter((choice) => choice.startsWith(value));
    return {
      completion: {
        values: values.slice(0, MAX_COMPLETIONS),
        total: values.length,
        hasMore: values.length > MAX_COMPLETIONS,
      },
    };
  };

  const attached = new Set<Attached>();
  /** The sessions still going; ended ones are dropped. */
  const live = () => {
    for (const entry of attached) {
      if (entry.server.transport) entry.connected = true;
      else if (entry.connected) attached.delete(entry);
    }
    return [...attached].filter((entry) => entry.server.transport);
  };
  const send = async (entries: readonly Attached[], notify: (server: Server) => Promise<void>) => {
    await Promise.all(
      entries.map((entry) =>
        notify(entry.server).catch((error: unknown) =>
          onError(error instanceof Error ? error : new Error(String(error))),
        ),
      ),
    );
  };

  const hasResources = resources !== undefined || resourceTemplates !== undefined;
  const configure = (server: Server) => {
    live();
    const entry: Attached = { server, subscriptions: new Set(), connected: false };
    attached.add(entry);
    // The session connects its server right after configuring it.
    queueMicrotask(() => {
      if (server.transport) entry.connected = true;
    });
    server.registerCapabilities({
      ...(hasResources ? { resources: { subscribe: true, listChanged: true } } : {}),
      ...(prompts !== undefined ? { prompts: { listChanged: true } } : {}),
      completions: {},
    });

    if (hasResources) {
      server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
        const listed = current.resources().map(resourceListing);
        for (const { template } of current.templates()) {
          if (!template.list) continue;
          try {
            listed.push(...(await template.list(scopeOf(extra))).map(resourceListing));
          } catch (error) {
            throw asMcpError(`Listing the resources of ${template.name} failed`, error);
          }
        }
        return { resources: listed };
      });
      server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
        resourceTemplates: current.templates().map(({ template }) => templateListing(template)),
      }));
      server.setRequestHandler(ReadResourceRequestSchema, async ({ params: { uri } }, extra) => {
        const found = resolve(uri);
        const declared = found.resource?.mimeType ?? found.template?.mimeType;
        let content: Awaited<ReturnType<McpResource['read']>>;
        try {
          content = found.resource
            ? await found.resource.read(uri, scopeOf(extra))
            : await found.template.read(uri, found.vars, scopeOf(extra));
        } catch (error) {
          throw asMcpError(`Reading ${uri} failed`, error);
        }
        return toReadResult(uri, declared, content, maxBytes);
      });
      server.setRequestHandler(SubscribeRequestSchema, ({ params: { uri } }) => {
        resolve(uri);
        if (!entry.subscriptions.has(uri) && entry.subscriptions.size >= MAX_SUBSCRIPTIONS) {
          throw new CatalogError(
            ErrorCode.InvalidRequest,
            `A session may subscribe to at most ${MAX_SUBSCRIPTIONS} resources`,
          );
        }
        entry.subscriptions.add(uri);
        return {};
      });
      server.setRequestHandler(UnsubscribeRequestSchema, ({ params: { uri } }) => {
        entry.subscriptions.delete(uri);
        return {};
      });
    }

    if (prompts !== undefined) {
      const promptNamed = (name: string) => {
        const prompt = current.prompts().find((candidate) => candidate.name === name);
        if (!prompt) throw new CatalogError(ErrorCode.InvalidParams, `Prompt ${name} not found`);
        return prompt;
      };
      server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: current.prompts().map(promptListing) }));
      server.setRequestHandler(GetPromptRequestSchema, async ({ params }, extra) => {
        const prompt = promptNamed(params.name);
        const args = parsePromptArgs(prompt, params.arguments ?? {}, maxArgumentLength);
        let outcome: Awaited<ReturnType<McpPrompt['get']>>;
        try {
          outcome = await prompt.get(args, scopeOf(extra));
        } catch (error) {
          throw asMcpError(`Getting the prompt ${prompt.name} failed`, error);
        }
        return toPromptResult(prompt, outcome, maxBytes);
      });
    }

    server.setRequestHandler(CompleteRequestSchema, async ({ params: { ref, argument, context } }) => {
      const filled = context?.arguments ?? {};
      if (ref.type === 'ref/prompt') {
        const prompt =
          prompts !== undefined ? current.prompts().find((candidate) => candidate.name === ref.name) : undefined;
        if (!prompt) throw new CatalogError(ErrorCode.InvalidParams, `Prompt ${ref.name} not found`);
        const what = `the argument ${argument.name} of ${prompt.name}`;
        return complete(
          prompt.complete?.[argument.name],
          enumOptions(prompt, argument.name),
          argument.value,
          filled,
          what,
        );
      }
      const entryOf = current.templates().find(({ template }) => template.uriTemplate === ref.uri);
      if (!entryOf) {
        // A resource of a fixed URI has nothing to complete.
        if (current.resources().some((resource) => resource.uri === ref.uri)) {
          return { completion: { values: [], total: 0, hasMore: false } };
        }
        throw new CatalogError(ErrorCode.InvalidParams, `Resource template ${ref.uri} not found`);
      }
      const { template } = entryOf;
      const what = `the ${argument.name} of ${template.uriTemplate}`;
      return complete(template.complete?.[argument.name], undefined, argument.value, filled, what);
    });
  };

  const notifier: CatalogNotifier = {
    async notifyResourceUpdated(uri) {
      await send(
        live().filter((entry) => entry.subscriptions.has(uri)),
        (server) => server.sendResourceUpdated({ uri }),
      );
    },
    async notifyResourcesChanged() {
      if (hasResources) await send(live(), (server) => server.sendResourceListChanged());
    },
    async notifyPromptsChanged() {
      if (prompts !== undefined) await send(live(), (server) => server.sendPromptListChanged());
    },
  };
  return { configure, notifier };
}
