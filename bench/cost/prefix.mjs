// The cacheable share of a run's requests, from the bodies as they reached the server: each request
// is its tools (JSON of the array) then each message (JSON), in order; a request's cacheable part is
// the longest token prefix it shares with any earlier request of the run (what a provider's prefix
// cache could serve it from).

/**
 * The parts of a request body in the order a provider reads them. Each is tokenised on its own, so a
 * run's many copies of one message are tokenised once and requests compare as arrays of parts.
 */
export const requestParts = (body) => [
  JSON.stringify(body.tools ?? []),
  ...body.messages.map((m) => JSON.stringify(m)),
];

const sharedLength = (a, b) => {
  const end = Math.min(a.length, b.length);
  let i = 0;
  while (i < end && a[i] === b[i]) i++;
  return i;
};

/**
 * Measures a run's request bodies with `encode` (text → token array). Requests go into a trie of
 * parts as they come: a request's walk down it is its shared prefix with every earlier request at
 * once, and where the walk leaves the trie the part is compared token by token with the parts that
 * earlier requests had there. Returns per request its tokens and cacheable tokens, and the sums.
 */
export function measurePrefixes(bodies, encode) {
  const parts = new Map();
  const part = (text) => {
    let known = parts.get(text);
    if (!known) {
      known = { tokens: encode(text) };
      parts.set(text, known);
    }
    return known;
  };
  const root = new Map();
  const requests = bodies.map((body) => {
    let node = root;
    let tokens = 0;
    let cacheable = 0;
    let shared = true;
    for (const text of requestParts(body)) {
      const current = part(text);
      tokens += current.tokens.length;
      let next = node.get(current);
      if (shared && next) cacheable += current.tokens.length;
      else if (shared) {
        shared = false;
        let best = 0;
        for (const earlier of node.keys()) best = Math.max(best, sharedLength(current.tokens, earlier.tokens));
        cacheable += best;
      }
      if (!next) {
        next = new Map();
        node.set(current, next);
      }
      node = next;
    }
    return { tokens, cacheable };
  });
  const sum = (key) => requests.reduce((total, r) => total + r[key], 0);
  return {
    requests,
    tokens: sum('tokens'),
    cacheable: sum('cacheable'),
    largest: Math.max(0, ...requests.map((r) => r.tokens)),
  };
}
