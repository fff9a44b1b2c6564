import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type HostAnswer, hasErrorCode, OpenManusError } from '@openmanus/core';

/**
 * A person's decision about a run: an answer to what it waits for (an approval, a denial, a reply)
 * or its cancel. Only a holder of the workers' decision key can make one: it carries an HMAC over
 * the run, what it answers, the decision itself, who made it, when, and a nonce, so it cannot be
 * forged with database access alone, nor replayed for another run or another call.
 */
export type Decision =
  | { readonly runId: string; readonly subject: `answer:${string}`; readonly answer: HostAnswer }
  | { readonly runId: string; readonly subject: 'cancel' };

type Unsigned = Decision & {
  readonly v: 1;
  /** Who decided, as they named themselves (signed: it cannot be changed after). */
  readonly by: string;
  /** When, as an ISO date. */
  readonly at: string;
  readonly nonce: string;
};

export type SignedDecision = Unsigned & {
  /** HMAC-SHA256 of all the above under the key, hex. */
  readonly mac: string;
};

/** What an answer to the effect `effectId` is recorded under (one decision each). */
export const answerSubject = (effectId: string): `answer:${string}` => `answer:${effectId}`;

export interface DecisionKey {
  sign(decision: Decision, by: string): SignedDecision;
  /** The decision `message` holds when this key signed it, else why it is refused. */
  verify(message: unknown): { ok: true; decision: SignedDecision } | { ok: false; reason: string };
  /** An HMAC of a constant: it tells keys apart without telling anything of them. */
  readonly fingerprint: string;
}

/** The shortest key taken: 32 characters (`generateDecisionKey` makes 64 hex digits). */
const MIN_KEY_LENGTH = 32;
// Bounds on what is read from a message: the database is not trusted to keep them.
const MAX_ID = 1_000;
const MAX_TEXT = 1_000_000;

/** A new random decision key (256 bits, hex). */
export const generateDecisionKey = (): string => randomBytes(32).toString('hex');

export function decisionKey(secret: string): DecisionKey {
  const key = secret.trim();
  if (key.length < MIN_KEY_LENGTH)
    throw new RangeError(`a decision key needs at least ${MIN_KEY_LENGTH} characters (generateDecisionKey makes one)`);
  const mac = (text: string) => createHmac('sha256', key).update(text).digest('hex');
  return {
    fingerprint: mac('openmanus-decision-key-fingerprint').slice(0, 16),
    sign: (decision, by) => {
      const unsigned: Unsigned = {
        ...decision,
        v: 1,
        by,
        at: new Date().toISOString(),
        nonce: randomBytes(16).toString('hex'),
      };
      return { ...unsigned, mac: mac(macInput(unsigned)) };
    },
    verify: (message) => {
      const decision = parseDecision(message);
      if (!decision) return { ok: false, reason: 'not a signed decision' };
      const expected = Buffer.from(mac(macInput(decision)), 'hex');
      const given = Buffer.from(decision.mac, 'hex');
      if (given.length !== expected.length || !timingSafeEqual(given, expected))
        return { ok: false, reason: 'its signature is not the workers\u2019 key\u2019s' };
      return { ok: true, decision };
    },
  };
}

/** What the MAC covers, in a fixed order (stored JSON may reorder an object's keys). */
function macInput(decision: Unsigned): string {
  const answer = 'answer' in decision ? decision.answer : undefined;
  return JSON.stringify([
    'openmanus-decision/1',
    decision.runId,
    decision.subject,
    answer?.type ?? null,
    answer?.effectId ?? null,
    answer?.type === 'approvalDenied' ? (answer.reason ?? null) : null,
    answer?.type === 'humanReplied' ? answer.answer : null,
    decision.by,
    decision.at,
    decision.nonce,
  ]);
}

const text = (value: unknown, max = MAX_ID): value is string => typeof value === 'string' && value.length <= max;

/** The decision in `message` when it has a decision's shape (an answer bound to its own effect), else `undefined`. */
function parseDecision(message: unknown): SignedDecision | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as Record<string, unknown>;
  if (m.v !== 1 || !text(m.runId) || !text(m.subject) || !text(m.by) || !text(m.at) || !text(m.nonce)) return undefined;
  if (!text(m.mac) || !/^[0-9a-f]{64}$/.test(m.mac)) return undefined;
  const signed = { v: 1 as const, runId: m.runId, by: m.by, at: m.at, nonce: m.nonce, mac: m.mac };
  if (m.subject === 'cancel') return m.answer === undefined ? { ...signed, subject: 'cancel' } : undefined;
  const answer = parseAnswer(m.answer);
  if (!answer || m.subject !== answerSubject(answer.effectId)) return undefined;
  return { ...signed, subject: answerSubject(answer.effectId), answer };
}

function parseAnswer(value: unknown): HostAnswer | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const a = value as Record<string, unknown>;
  if (!text(a.effectId)) return undefined;
  const effectId = a.effectId;
  if (a.type === 'approvalGiven') return { type: 'approvalGiven', effectId };
  if (a.type === 'approvalDenied' && (a.reason === undefined || text(a.reason, MAX_TEXT)))
    return { type: 'approvalDenied', effectId, ...(a.reason !== undefined ? { reason: a.reason } : {}) };
  if (a.type === 'humanReplied' && text(a.answer, MAX_TEXT))
    return { type: 'humanReplied', effectId, answer: a.answer };
  return undefined;
}

/** The decision in words, for whoever comes second: "approved by alice@host at …". */
export function describeDecision(decision: SignedDecision): string {
  const what = !('answer' in decision)
    ? 'cancelled'
    : decision.answer.type === 'approvalGiven'
      ? 'approved'
      : decision.answer.type === 'approvalDenied'
        ? `rejected${decision.answer.reason ? ` ("${decision.answer.reason}")` : ''}`
        : 'answered';
  return `${what} by ${decision.by} at ${decision.at}`;
}

/** Thrown to the second of two decisions about the same thing: the first one stands. */
export class AlreadyDecidedError extends OpenManusError<'ALREADY_DECIDED'> {
  static readonly codes = ['ALREADY_DECIDED'] as const;
  override readonly name = 'AlreadyDecidedError';
  /** `context`: what the caller found besides (the run no longer waits for it). */
  constructor(
    readonly decision: SignedDecision,
    context?: string,
  ) {
    super('ALREADY_DECIDED', `already decided: ${describeDecision(decision)}${context ? `; ${context}` : ''}`);
  }
  static override isInstance(value: unknown): value is AlreadyDecidedError {
    return hasErrorCode(value, AlreadyDecidedError.codes);
  }
}

/** Thrown when a client cannot make a decision the workers would take: no key, or not their key. */
export class DecisionKeyError extends OpenManusError<'DECISION_KEY'> {
  static readonly codes = ['DECISION_KEY'] as const;
  override readonly name = 'DecisionKeyError';
  constructor(message: string, options?: { readonly cause?: unknown }) {
    super('DECISION_KEY', message, options);
  }
  static override isInstance(value: unknown): value is DecisionKeyError {
    return hasErrorCode(value, DecisionKeyError.codes);
  }
}
