// An answer to a server's form is checked against the requested schema (MCP's flat kind) before it
// is sent, the form's defaults filled in for the fields left out (SEP-1034).
import { describe, expect, it } from 'vitest';
import { checkElicitationAnswer, withSchemaDefaults } from '../src/client/elicitationAnswer.js';

const FORM = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 20 },
    email: { type: 'string', format: 'email' },
    homepage: { type: 'string', format: 'uri' },
    born: { type: 'string', format: 'date' },
    size: { type: 'string', enum: ['S', 'M', 'L'], default: 'M' },
    color: {
      type: 'string',
      oneOf: [
        { const: 'red', title: 'Red' },
        { const: 'blue', title: 'Blue' },
      ],
    },
    age: { type: 'integer', minimum: 0, maximum: 150 },
    score: { type: 'number' },
    agree: { type: 'boolean', default: false },
    toppings: {
      type: 'array',
      items: { anyOf: [{ const: 'ham' }, { const: 'olives' }] },
      maxItems: 1,
    },
  },
  required: ['name'],
};

describe('an answer to a form', () => {
  it('gets the defaults of the fields left out, and keeps what was given', () => {
    expect(withSchemaDefaults(FORM, { name: 'Ada', size: 'L' })).toEqual({ name: 'Ada', size: 'L', agree: false });
  });

  it('that fits the form passes', () => {
    const answer = {
      name: 'Ada',
      email: 'ada@example.org',
      homepage: 'https://example.org',
      born: '1815-12-10',
      size: 'S',
      color: 'blue',
      age: 36,
      score: 9.5,
      agree: true,
      toppings: ['olives'],
    };
    expect(checkElicitationAnswer(FORM, answer)).toBeUndefined();
  });

  it.each([
    [{}, '"name" is required'],
    [{ name: 'A' }, '"name" must have at least 2 characters'],
    [{ name: 42 }, '"name" must be a string'],
    [{ name: 'Ada', email: 'nobody' }, '"email" must be an email address'],
    [{ name: 'Ada', homepage: 'not a uri' }, '"homepage" must be a URI'],
    [{ name: 'Ada', born: '10/12/1815' }, '"born" must be a date (YYYY-MM-DD)'],
    [{ name: 'Ada', size: 'XL' }, '"size" must be one of ["S","M","L"]'],
    [{ name: 'Ada', color: 'green' }, '"color" must be one of ["red","blue"]'],
    [{ name: 'Ada', age: 3.5 }, '"age" must be an integer'],
    [{ name: 'Ada', age: 200 }, '"age" must be at most 150'],
    [{ name: 'Ada', agree: 'yes' }, '"agree" must be true or false'],
    [{ name: 'Ada', toppings: ['pineapple'] }, '"toppings" has "pineapple", which is not one of its options'],
    [{ name: 'Ada', toppings: ['ham', 'olives'] }, '"toppings" must have at most 1 items'],
    [{ name: 'Ada', nickname: 'A' }, '"nickname" is not a field of the form'],
  ])('%j is refused: %s', (answer, problem) => {
    expect(checkElicitationAnswer(FORM, answer as never)).toBe(problem);
  });
});
