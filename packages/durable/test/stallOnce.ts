import type { RecordedRequest, ScriptedAnswer } from '@openmanus/core/testing';

/**
 * A model script whose first request matching `when` never gets an answer (the connection stays
 * open), so a worker can be killed mid-call; `held` resolves once that request has come.
 */
export function stallOnce(
  reply: (request: RecordedRequest) => ScriptedAnswer,
  when: (request: RecordedRequest) => boolean,
): { script: (request: RecordedRequest) => ScriptedAnswer; held: Promise<void> } {
  let holding = true;
  let hold: () => void = () => {};
  const held = new Promise<void>((resolve) => {
    hold = resolve;
  });
  const script = (request: RecordedRequest): ScriptedAnswer => {
    const answer = reply(request);
    if (!holding || !when(request)) return answer;
    holding = false;
    hold();
    return { ...answer, stallAfter: 0 };
  };
  return { script, held };
}
