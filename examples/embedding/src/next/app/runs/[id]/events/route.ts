import { agentRuns, type RunContext } from '../../../../runs.js';

export const runtime = 'nodejs';
export const dynamic = 'force-dynamic'; // a stream: never cached

export async function GET(request: Request, { params }: RunContext) {
  const runs = agentRuns();
  return runs.refusal(request.headers.get('authorization')) ?? runs.events((await params).id);
}
