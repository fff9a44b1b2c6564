import { agentRuns, type RunContext } from '../../../runs.js';

export const runtime = 'nodejs';

export async function GET(request: Request, { params }: RunContext) {
  const runs = agentRuns();
  return runs.refusal(request.headers.get('authorization')) ?? runs.read((await params).id);
}
