import { Writable } from 'node:stream';

/** Where the live view goes: the view's stream, and the log stream that scrolls above it. */
export interface LiveViewStreams {
  readonly out: NodeJS.WritableStream;
  readonly log: NodeJS.WritableStream;
  /** Redraw the view in place (`out` is a terminal that moves its cursor); else print it again on each change. */
  readonly redraw: boolean;
  /** The log is on the same screen as the view (both terminals): its lines go above the view. */
  readonly sharedScreen: boolean;
}

/**
 * A block of lines kept at the bottom of a terminal and redrawn in place when it changes, with log
 * lines scrolling above it; in a log file or a pipe, each new version of the block is printed in
 * turn, followed by a blank line, so it reads top to bottom.
 */
export interface LiveView {
  /** Shows this version of the block. */
  show(lines: readonly string[]): void;
  /** Writes `text` (whole lines) to the log stream, above the block. */
  above(text: string): void;
  /** Runs `task` (a question on the terminal) with the block out of its way, then draws it again. */
  aside<T>(task: () => Promise<T>): Promise<T>;
  /** Leaves the last block where it is, followed by a blank line, for what is printed after it. */
  close(): void;
}

export function createLiveView({ out, log, redraw, sharedScreen }: LiveViewStreams): LiveView {
  let block: readonly string[] = [];
  let drawn = 0;
  const erase = () => {
    // To the start of the block's first row, then clear to the end of the screen.
    if (drawn > 0) out.write(`\r\u001b[${drawn}A\u001b[J`);
    drawn = 0;
  };
  const draw = () => {
    if (block.length > 0) out.write(`${block.join('\n')}\n`);
    drawn = block.length;
  };
  return {
    show(lines) {
      block = lines;
      if (!redraw) {
        out.write(`${lines.join('\n')}\n\n`);
        return;
      }
      erase();
      draw();
    },
    above(text) {
      if (!(redraw && sharedScreen)) {
        log.write(text);
        return;
      }
      erase();
      log.write(text);
      draw();
    },
    async aside(task) {
      if (!redraw) return task();
      erase();
      try {
        return await task();
      } finally {
        draw();
      }
    },
    close() {
      if (redraw && drawn > 0) out.write('\n');
      drawn = 0;
    },
  };
}

/** A stream whose writes go above the view (for messages written to stderr, such as Ctrl+C's). */
export const streamAbove = (view: LiveView): Writable =>
  new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      view.above(String(chunk));
      done();
    },
  });
