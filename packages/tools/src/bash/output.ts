// What one command wrote to one stream of the shell: the text between its start and end markers,
// capped, with the exit status the end marker carries.

/**
 * Text kept up to `max` characters: the first and the last halves, with the size of what was cut
 * from the middle said where it was (a build's first error and its last lines both matter).
 */
export class CappedText {
  private head = '';
  private tail = '';
  private cut = 0;
  constructor(
    private readonly max: number,
    private readonly label: string,
  ) {}

  add(text: string): void {
    const half = Math.floor(this.max / 2);
    const room = half - this.head.length;
    if (room > 0) {
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (text === '') return;
    const tail = this.tail + text;
    const keep = this.max - half;
    if (tail.length > keep) {
      this.cut += tail.length - keep;
      this.tail = tail.slice(tail.length - keep);
    } else this.tail = tail;
  }

  toString(): string {
    if (this.cut === 0) return this.head + this.tail;
    return `${this.head}\n…[${this.cut} characters of ${this.label} cut here]…\n${this.tail}`;
  }
}

/**
 * One stream of the shell, framed per command: output before the command's start marker (what a
 * background job wrote between calls, the rest of an earlier command) is dropped, output up to its
 * end marker is kept, and what follows it is dropped. The end marker on stdout carries the exit status.
 */
export class CommandStream {
  private pending = '';
  private phase: 'before' | 'inside' | 'after' = 'after';
  private text: CappedText;
  private start = '';
  private end = '';
  /** The exit status the end marker gave (stdout), or 0 once the end was seen (stderr). */
  status: number | undefined;

  constructor(
    private readonly max: number,
    private readonly label: string,
  ) {
    this.text = new CappedText(max, label);
  }

  /** Frames the next command: its markers (`end` followed by digits and `__` on stdout, by `__` on stderr). */
  begin(start: string, end: string): void {
    this.start = start;
    this.end = end;
    this.pending = '';
    this.phase = 'before';
    this.status = undefined;
    this.text = new CappedText(this.max, this.label);
  }

  /** The command's start marker was seen. */
  get started(): boolean {
    return this.phase !== 'before';
  }

  get ended(): boolean {
    return this.phase === 'after';
  }

  get output(): string {
    // A partial marker still pending when the shell died is output after all.
    return this.phase === 'inside' ? `${this.text}${this.pending}` : this.text.toString();
  }

  add(chunk: string): void {
    if (this.phase === 'after') return;
    this.pending += chunk;
    if (this.phase === 'before') {
      const at = this.pending.indexOf(this.start);
      if (at < 0) {
        // Keep what could be the beginning of a marker split across chunks.
        this.pending = this.pending.slice(-(this.start.length - 1));
        return;
      }
      this.pending = this.pending.slice(at + this.start.length);
      this.phase = 'inside';
    }
    const at = this.pending.indexOf(this.end);
    if (at < 0) {
      // The end marker (with its status) may be split across chunks: hold back what could start it.
      const hold = this.end.length + 12;
      if (this.pending.length > hold) {
        this.text.add(this.pending.slice(0, -hold));
        this.pending = this.pending.slice(-hold);
      }
      return;
    }
    const status = /^(\d*)__/.exec(this.pending.slice(at + this.end.length));
    if (!status) return;
    this.text.add(this.pending.slice(0, at));
    this.status = Number(status[1] || 0);
    this.pending = '';
    this.phase = 'after';
  }
}
