// The workspace lent to a long-lived process's uid while it works: from its input until it says
// the input is done (a shell's command ended), one lent period at a time per workspace, so that
// between commands the workspace is the host's and the host's tools may change it.
import { lendWorkspace, serialized } from './reaping.js';

export interface WorkspaceLoan {
  /** Lends the workspace, if it is not lent already; resolves once it is. */
  lend(): Promise<void>;
  /** Gives it back (owners restored, setuid and setgid bits off), if it is lent. */
  giveBack(): Promise<void>;
}

export function workspaceLoan(workspace: string, uid: number): WorkspaceLoan {
  let period: { lent: Promise<void>; end: () => Promise<void> } | undefined;
  return {
    lend() {
      if (!period) {
        let finish!: () => void;
        const finished = new Promise<void>((resolve) => {
          finish = resolve;
        });
        let lentOk!: () => void;
        let lentFailed!: (error: unknown) => void;
        const lent = new Promise<void>((resolve, reject) => {
          lentOk = resolve;
          lentFailed = reject;
        });
        const whole = serialized(workspace, async () => {
          let back: () => Promise<void>;
          try {
            back = await lendWorkspace(workspace, uid);
          } catch (error) {
            return lentFailed(error);
          }
          lentOk();
          await finished;
          await back();
        });
        period = {
          lent,
          end: async () => {
            finish();
            await whole;
          },
        };
      }
      return period.lent;
    },
    async giveBack() {
      const current = period;
      period = undefined;
      await current?.end();
    },
  };
}
