/**
 * Deadlines for work that usually finishes long before them (a tool's time limit, a model
 * request's): `afterDelay(ms, fire)` calls `fire` once `ms` have passed, unless the returned
 * cancel came first. One Node timer serves all of them. A Node timer per deadline costs more
 * than the work it guards: a run holds one at a time, so each call built and tore down Node's
 * list for that duration (and its place in Node's queue of lists) only to cancel it.
 */

interface Deadline {
  readonly due: number;
  fire: (() => void) | undefined;
}

// A min-heap by due time; a cancelled deadline stays in it, emptied, until it surfaces.
const heap: Deadline[] = [];
let live = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let armedFor = Number.POSITIVE_INFINITY;
// The setTimeout the timer was set with: a test's fake timers may come and go under us.
let armedWith: typeof setTimeout | undefined;

export function afterDelay(ms: number, fire: () => void): () => void {
  if (armedWith !== undefined && armedWith !== setTimeout) {
    // Set with timers that are no longer the process's: it will not fire, set a new one.
    timer = undefined;
    armedFor = Number.POSITIVE_INFINITY;
  }
  const deadline: Deadline = { due: performance.now() + ms, fire };
  push(deadline);
  live++;
  if (deadline.due < armedFor) arm(deadline.due);
  else timer?.ref();
  return () => {
    if (!deadline.fire) return;
    deadline.fire = undefined;
    live--;
    dropCancelled();
    // Nothing left to wait for: the timer no longer keeps the process alive.
    if (live === 0) timer?.unref();
  };
}

function arm(due: number): void {
  if (timer) clearTimeout(timer);
  armedFor = due;
  armedWith = setTimeout;
  timer = setTimeout(expire, Math.max(1, Math.ceil(due - performance.now())));
}

function expire(): void {
  timer = undefined;
  armedFor = Number.POSITIVE_INFINITY;
  // Node's timers keep time in whole milliseconds: one may come due a fraction early.
  const now = performance.now() + 1;
  try {
    for (let top = heap[0]; top && top.due <= now; top = heap[0]) {
      pop();
      const fire = top.fire;
      if (!fire) continue;
      top.fire = undefined;
      live--;
      fire();
    }
  } finally {
    // Even if a callback threw, the deadlines still pending get their timer.
    dropCancelled();
    const next = heap[0];
    if (next) arm(next.due);
  }
}

/** Cancelled deadlines at the top go; when most of the heap is cancelled, it is rebuilt without them. */
function dropCancelled(): void {
  while (heap[0] && !heap[0].fire) pop();
  if (heap.length > 64 && heap.length > 4 * live) {
    const kept = heap.filter((d) => d.fire);
    heap.length = 0;
    for (const d of kept) push(d);
  }
}

function push(deadline: Deadline): void {
  let i = heap.push(deadline) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    const above = heap[parent] as Deadline;
    if (above.due <= deadline.due) break;
    heap[i] = above;
    i = parent;
  }
  heap[i] = deadline;
}

function pop(): void {
  const last = heap.pop();
  if (!last || heap.length === 0) return;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const right = left + 1;
    const child = right < heap.length && (heap[right] as Deadline).due < (heap[left] as Deadline).due ? right : left;
    if ((heap[child] as Deadline).due >= last.due) break;
    heap[i] = heap[child] as Deadline;
    i = child;
  }
  heap[i] = last;
}
