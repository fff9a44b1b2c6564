export declare const root: string;
export declare function markdownFiles(): string[];
export interface Block {
  readonly line: number;
  readonly code: string;
  readonly fragment: boolean;
  readonly file: string | undefined;
  /** Runs offline as written. */
  readonly run: boolean;
  /** What a runnable block prints, shown in the ```text block after it. */
  readonly prints: string | undefined;
}
export declare function blocksOf(text: string): Block[];
export declare function sourceOf(reference: string): string;
export declare function checkSnippets(documents: readonly { readonly name: string; readonly text: string }[]): {
  checked: number;
  failures: Map<string, string[]>;
};
