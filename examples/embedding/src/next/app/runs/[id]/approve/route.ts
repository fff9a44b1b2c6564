import { jsonBody } from '../../../../../runs.js';
import { agentRuns, type RunContext } from '../../../../runs.js';

export const runtime = 'nodejs';

export async function POST(request: Request, { params }: RunContext) {
  const runs = agentRuns();
  return (
    runs.refusal(request.headers.get('authorization')) ??
    runs.decide((await params).id, 'approve', await jsonBody(request))
  );
}
