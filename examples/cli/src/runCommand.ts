import { type ParseArgsConfig, parseArgs } from 'node:util';
import { messageOf } from '@openmanus/core';
import type { DurableClient, RunInfo } from '@openmanus/durable';
import { durableArgs, withDurableClient } from './durableOptions.js';
import { failure } from './options.js';
import type { SessionIo } from './session.js';

/** A command on one durable run (`openmanus status|approve|answer|cancel <runId> …`). */
export interface RunCommand {
  /** `openmanus <name>`. */
  readonly name: string;
  readonly usage: string;
  /** Its own options, besides the database's and the key's (`durableArgs`) and `--help`. */
  readonly options?: NonNullable<ParseArgsConfig['options']>;
  /** The words it takes after the run id (`answer`: the text). */
  readonly words?: readonly string[];
  run(client: DurableClient, request: RunCommandRequest): Promise<number>;
}

export interface RunCommandRequest {
  readonly runId: string;
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly words: readonly string[];
  readonly io: SessionIo;
}

/** Parses a run command's arguments (exit 2 when they are wrong), then runs it with a client of the workers' database. */
export async function runCommand(command: RunCommand, argv: string[], io: SessionIo): Promise<number> {
  const name = `openmanus ${command.name}`;
  const fail = failure(io, name);
  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        ...command.options,
        ...durableArgs,
        help: { type: 'boolean', short: 'h', default: false },
      },
    }) as typeof parsed;
  } catch (error) {
    return fail(`${messageOf(error)}\n\n${command.usage}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(`${command.usage}\n`);
    return 0;
  }
  const wanted = ['<runId>', ...(command.words ?? [])];
  if (positionals.length !== wanted.length) {
    return fail(`expected ${wanted.join(' ')}, got ${positionals.length} argument(s)\n\n${command.usage}`);
  }
  const [runId = '', ...words] = positionals;
  return withDurableClient(io, name, values, (client) => command.run(client, { runId, values, words, io }));
}

/**
 * The run a command about `id` is for, as it is now: the run with that id or, given a flow's id,
 * the run of the flow's step in flight (the one a person approving or answering for the flow means).
 */
export async function runOrFlowStep(client: DurableClient, id: string): Promise<RunInfo> {
  const run = await client.getRun(id);
  if (run) return run;
  const flow = await client.getFlow(id);
  if (!flow) throw new Error(`no run or flow has the id "${id}"`);
  const step = flow.status === 'running' ? flow.progress?.runId : undefined;
  const stepRun = step ? await client.getRun(step) : undefined;
  if (!stepRun) throw new Error(`flow "${id}" has no step in flight (it is ${flow.status})`);
  return stepRun;
}
