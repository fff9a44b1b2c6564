// OpenManus's rule for tool names, and the suffix that keeps two tools from sharing one name.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TOOL_NAME, mcpToolName, sanitizeToolName, uniqueToolName } from '../src/client/naming.js';

describe('mcpToolName', () => {
  it('gives OpenManus’s names for its own examples', () => {
    expect(mcpToolName('/home/alice/projects/OpenManus/.venv/bin/python', 'str_replace_editor')).toBe(
      'mcp_home_alice_projects_OpenManus_venv_bin_python_str_replace_ed',
    );
    expect(mcpToolName('http://127.0.0.1:8000/sse', 'browser_use')).toBe('mcp_http_127_0_0_1_8000_sse_browser_use');
  });

  it('keeps hyphens, replaces everything else outside [A-Za-z0-9_-], collapses and trims underscores', () => {
    expect(mcpToolName('everything', 'get-tiny-image')).toBe('mcp_everything_get-tiny-image');
    expect(mcpToolName('my server', 'files/read.text')).toBe('mcp_my_server_files_read_text');
    expect(sanitizeToolName('__weird__ná.me__')).toBe('weird_n_me');
    expect(sanitizeToolName('日本語')).toBe('');
  });

  it('always gives a name the model APIs accept', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (server, tool) => {
        const name = mcpToolName(server, tool);
        expect(name).toMatch(/^[A-Za-z0-9-]([A-Za-z0-9_-]*[A-Za-z0-9-])?$/);
        expect(name).not.toContain('__');
        expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
      }),
    );
  });
});

describe('uniqueToolName', () => {
  it('keeps a free name, and suffixes a taken one with the first free number', () => {
    expect(uniqueToolName('mcp_a_echo', new Set())).toBe('mcp_a_echo');
    expect(uniqueToolName('mcp_a_echo', new Set(['mcp_a_echo']))).toBe('mcp_a_echo_2');
    expect(uniqueToolName('mcp_a_echo', new Set(['mcp_a_echo', 'mcp_a_echo_2']))).toBe('mcp_a_echo_3');
  });

  it('cuts a 64-character name to make room for its suffix', () => {
    const long = mcpToolName('server', 'a'.repeat(80));
    expect(long).toHaveLength(64);
    const second = uniqueToolName(long, new Set([long]));
    expect(second).toBe(`${long.slice(0, 62)}_2`);
    // A cut that ends on "_" does not make a double underscore.
    const underscored = `${'b'.repeat(61)}_cc`;
    expect(uniqueToolName(underscored, new Set([underscored]))).toBe(`${'b'.repeat(61)}_2`);
  });

  it('never gives a taken name, nor one longer than 64', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { maxLength: 30 }), (raw) => {
        const taken = new Set<string>();
        for (const name of raw.map((r) => mcpToolName('s', r.slice(0, 3)) + 'x'.repeat(70))) {
          const unique = uniqueToolName(sanitizeToolName(name), taken);
          expect(taken.has(unique)).toBe(false);
          expect(unique.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
          taken.add(unique);
        }
      }),
    );
  });
});
