// Daytona's process API takes one shell command line: argument vectors are quoted into one.

/** A word the shell passes through as it is. */
export const shellWord = (word: string): string =>
  /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;

/** The command line that runs `words` as they are. */
export const shellLine = (words: readonly string[]): string => words.map(shellWord).join(' ');
