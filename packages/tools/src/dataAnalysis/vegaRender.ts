// Vega-Lite compiled and drawn on the server, with no browser: the check that a chart can be
// made, and its SVG. Expressions in a spec (the model wrote it) are interpreted, never turned
// into code, and the loader loads nothing: a chart draws only the rows it was given.
import { messageOf } from '@openmanus/core';
import { type Loader, type LoggerInterface, logger, parse, type Spec, View, Warn } from 'vega';
import { expressionInterpreter } from 'vega-interpreter';
import { compile, type TopLevelSpec } from 'vega-lite';
import { ChartError } from './chartError.js';
import { dataUrls, type VegaLiteSpec } from './chartSpec.js';

/** A logger that keeps what it is told, for the model to read. */
function collecting(): { readonly logger: LoggerInterface; readonly warnings: string[]; readonly errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  const log = logger(Warn, undefined, (_method, level, args) => {
    (level === 'ERROR' ? errors : warnings).push(args.map(messageOf).join(' '));
  });
  return { logger: log, warnings, errors };
}

const refuse = async (): Promise<never> => {
  throw new Error('charts load nothing: their data is the CSV file');
};

/**
 * Refuses every load (data URLs, images) and keeps no link (an `href` channel). Sanitizing
 * answers "no URL" rather than failing: Vega's SVG writer reads the answer for a link in a
 * promise no one awaits, and a refusal there was a rejection that no one handled.
 */
const noLink = async () => ({}) as Awaited<ReturnType<Loader['sanitize']>>;
const noLoading: Loader = { load: refuse, sanitize: noLink, http: refuse, file: refuse };

export interface CompiledChart {
  /** The Vega spec the Vega-Lite spec compiles to. */
  readonly vega: Spec;
  /** What Vega-Lite warned about (e.g. a field it had to guess the type of). */
  readonly warnings: readonly string[];
}

/** Compiles a Vega-Lite spec, or says why it does not compile. */
export function compileChart(spec: VegaLiteSpec): CompiledChart {
  const log = collecting();
  let vega: Spec;
  try {
    vega = compile(spec as unknown as TopLevelSpec, { logger: log.logger }).spec;
  } catch (error) {
    throw new ChartError(`The Vega-Lite spec does not compile: ${messageOf(error)}`);
  }
  const urls = dataUrls(vega);
  if (urls.length > 0) {
    throw new ChartError(
      `The Vega-Lite spec loads data from ${urls.join(', ')}; a chart draws only the rows of its csvFilePath, so leave data out of the spec.`,
    );
  }
  return { vega, warnings: log.warnings };
}

/** Draws a compiled chart as an SVG document, or says why it cannot be drawn. */
export async function renderSvg(spec: Spec): Promise<string> {
  const log = collecting();
  let view: View | undefined;
  try {
    view = new View(parse(spec, undefined, { ast: true }), {
      expr: expressionInterpreter,
      loader: noLoading,
      logger: log.logger,
      logLevel: Warn,
      renderer: 'none',
    });
    const svg = await view.toSVG();
    if (log.errors.length > 0) throw new Error(log.errors.join('; '));
    return svg;
  } catch (error) {
    throw new ChartError(`The chart does not render: ${messageOf(error)}`);
  } finally {
    view?.finalize();
  }
}
