// Task A of the cost table: a research loop. The scripted model calls `search` or `fetch_page` once a
// step with new arguments; each tool answers with ~300 tokens of deterministic pseudo-random search
// results or page prose (the same for every contender, different at every step); after STEPS tool
// steps the model answers.
export const STEPS = 150;
/** Every contender's step limit, raised past STEPS (ours' default is 30, the peers' 1 to 25): the one setting changed. */
export const STEP_LIMIT = 200;

export const systemPrompt =
  'You are a research assistant. Use the tools to search the web and read pages, then answer with a short report.';
export const task =
  'Research how visitors get around Kyoto: passes and their prices, the main sights and their opening hours, and the festivals. Cite your sources.';

/** The two tools every contender defines (each its own way): one string argument each. */
export const researchTools = [
  { name: 'search', description: 'Search the web; returns the top results.', argument: 'query' },
  { name: 'fetch_page', description: 'Fetch a web page; returns its text.', argument: 'url' },
];

const topics = ['bus pass', 'subway', 'temples', 'gardens', 'festivals', 'opening hours', 'admission', 'rail pass'];
const sites = ['kyoto-guide.example', 'japan-rail.example', 'temple-info.example', 'city-bus.example'];

/** The model's reply to the request at `step` (0-based): a tool call, or the answer once the steps are done. */
export function researchReply(step) {
  if (step >= STEPS)
    return {
      content:
        'Kyoto is best covered by bus and subway: a one-day bus pass costs 700 yen, a combined subway and bus pass 1,100 yen. ' +
        'Kinkaku-ji opens 9:00-17:00 (500 yen), Fushimi Inari is open all day (free), Kiyomizu-dera 6:00-18:00 (400 yen). ' +
        'The Gion Matsuri fills July, the Aoi Matsuri is on 15 May and the Jidai Matsuri on 22 October. Sources: the pages fetched above.',
    };
  const topic = topics[step % topics.length];
  const [tool, args] =
    step % 2 === 0
      ? ['search', { query: `kyoto ${topic} ${2020 + (step % 6)} guide part ${step}` }]
      : ['fetch_page', { url: `https://${sites[step % sites.length]}/${topic.replace(' ', '-')}/${step}` }];
  return { toolCalls: [{ id: `call_${step}`, name: tool, arguments: args }] };
}

const words = (
  'the a of to and in is for on with as by at from that this it be are was or an which city temple ' +
  'station bus line pass ticket price yen day open close hours visitors shrine garden festival route ' +
  'walk minutes north south east west river bridge gate hall museum market street district old new ' +
  'season spring autumn summer winter crowd morning evening entrance fee adult child free card rail ' +
  'subway transfer stop map guide tour local history built century famous view path stone wooden'
).split(' ');

/** mulberry32, seeded from the call: the same observation for every contender at the same step. */
function random(seedText) {
  let seed = 2166136261;
  for (let i = 0; i < seedText.length; i++) seed = Math.imul(seed ^ seedText.charCodeAt(i), 16777619);
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(next, length) {
  const picked = Array.from({ length }, () => words[Math.floor(next() * words.length)]);
  const text = picked.join(' ');
  return `${text[0].toUpperCase()}${text.slice(1)}${next() < 0.2 ? ` (${Math.floor(next() * 2000)} yen)` : ''}.`;
}

const paragraph = (next, sentences) =>
  Array.from({ length: sentences }, () => sentence(next, 8 + Math.floor(next() * 10))).join(' ');

/** What the tool returns for these arguments: ~300 tokens (o200k_base) of results or page text. */
export function observe(tool, args) {
  const next = random(`${tool} ${JSON.stringify(args)}`);
  if (tool === 'search')
    return Array.from({ length: 5 }, (_, i) => {
      const site = sites[Math.floor(next() * sites.length)];
      return `${i + 1}. ${sentence(next, 5).slice(0, -1)}\nhttps://${site}/${Math.floor(next() * 1e6)}\n${paragraph(next, 3)}`;
    }).join('\n\n');
  return `# ${sentence(next, 6).slice(0, -1)}\n\n${paragraph(next, 10)}\n\n${paragraph(next, 10)}`;
}
