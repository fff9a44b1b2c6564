// The workspace lent to a long-lived process's uid (a shell as host root): from its first input
// until another call on the workspace needs it or the process ends, so that what the shell's
// background jobs do between commands still works. Each input lends what the host made meanwhile
// (a file the editor created) too.
import { lendWorkspace, nextQueued, serialized } from './reaping.js';

export interface WorkspaceLoan {
  /** Lends the workspace (again: what the host made since is lent too); resolves once it is. */
  lend(): Promise<void>;
  /** Gives it back (owners restored, setuid and setgid bits off), if it is lent. */
  giveBack(): Promise<void>;
}

interface Period {
  /** Settles once the workspace is lent (rejects when lending failed). */
  readonly lent: Promise<void>;
  /** Lendings of what the host made since, all done before the workspace is given back. */
  relending: Promise<void>;
  readonly end: () => Promise<void>;
}

export function workspaceLoan(workspace: string, uid: number): WorkspaceLoan {
  let period: Period | undefined;
  const open = (): Period => {
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
    const current: Period = {
      lent,
      relending: Promise.resolve(),
      end: async () => {
        finish();
        await whole;
      },
    };
    const whole = serialized(workspace, async () => {
      let back: () => Promise<void>;
      try {
        back = await lendWorkspace(workspace, uid);
      } catch (error) {
        if (period === current) period = undefined;
        return lentFailed(error);
      }
      lentOk();
      const wanted = nextQueued(workspace);
      await Promise.race([finished, wanted.queued]);
      wanted.stop();
      if (period === current) period = undefined;
      await current.relending;
      await back();
    });
    return current;
  };
  const loan: WorkspaceLoan = {
    async lend() {
      const current = period;
      if (!current) {
        period = open();
        return period.lent;
      }
      await current.lent;
      // Given back meanwhile (another call needed it): lent anew, after that call.
      if (period !== current) return loan.lend();
      const again = current.relending.then(async () => {
        await lendWorkspace(workspace, uid);
      });
      current.relending = again.catch(() => {});
      await again;
    },
    async giveBack() {
      await period?.end();
    },
  };
  return loan;
}
