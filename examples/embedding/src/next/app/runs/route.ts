import { jsonBody } from '../../../runs.js';
import { agentRuns } from '../../runs.js';

export const runtime = 'nodejs'; // better-sqlite3 is a native module: not for the edge runtime

export async function POST(request: Request) {
  const runs = agentRuns();
  return runs.refusal(request.headers.get('authorization')) ?? runs.start(await jsonBody(request));
}
