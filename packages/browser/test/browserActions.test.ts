// browser_use's actions in a real Chromium against the fixture site on 127.0.0.1: one complaint of
// browser agents' users per test where there is one (stale refs, new tabs, dialogs, downloads,
// frames, overlays, slow pages).
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { err, ok, type ToolOutput } from '@openmanus/core';
import { scriptedLlm } from '@openmanus/core/testing';
import { describe, expect, it } from 'vitest';
import { browserHarness, chromePath, refIn } from './harness.js';

const chrome = chromePath();

describe.skipIf(!chrome)('browser_use in a real Chromium', () => {
  const h = browserHarness(chrome ?? '');
  const home = () => `${h.site.url}/`;

  it('fills a form (text, native select, checkbox), submits it and reports what the page said back', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: home() });
    expect(state).toMatch(
      /^Navigated to http:\/\/127\.0\.0\.1:\d+\/\.\n\n<page_content untrusted="true">\nURL: http:\/\/127\.0\.0\.1:\d+\/ {3}Title: Fixture Home {3}\(HTTP 200\)\n/,
    );
    const typed = await run.ok({ action: 'input_text', ref: refIn(state, 'textbox "Name"'), text: 'Alice' });
    expect(typed).toContain('~ textbox "Name" [ref=e5] placeholder="Your name": "Alice"');
    const selected = await run.ok({
      action: 'select_dropdown_option',
      ref: refIn(state, 'combobox "Color"'),
      text: 'Red',
    });
    expect(selected).toContain('"Red"(selected)');
    const checked = await run.ok({ action: 'click_element', ref: refIn(state, 'checkbox "I agree"') });
    expect(checked).toContain('~ checkbox "I agree" [checked]');
    const submitted = await run.ok({ action: 'click_element', ref: refIn(state, 'button "Submit form"') });
    expect(submitted).toMatch(/^Clicked button "Submit form" \[ref=e\d+\]\./);
    expect(submitted).toContain('* paragraph [ref=e');
    expect(submitted).toContain('"Thanks, Alice (red, agreed)"');
    // Nothing navigated: a diff, not the whole state again.
    expect(submitted).not.toContain('Elements (');
  });

  it('follows links, goes back and reloads; a page that does not exist shows its HTTP status', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: home() });
    const two = await run.ok({ action: 'click_element', ref: refIn(state, 'Go to page two') });
    expect(two).toMatch(/Title: Page Two {3}\(HTTP 200\)/);
    expect(two).toContain('heading "Page two" [level=1]');
    expect(await run.ok({ action: 'go_back' })).toMatch(
      /^Navigated back\.\n\n<page_content untrusted="true">\nURL: http:\/\/127\.0\.0\.1:\d+\/ {3}Title: Fixture Home/,
    );
    expect(await run.ok({ action: 'refresh' })).toMatch(
      /^Reloaded the page\.\n\n<page_content untrusted="true">\nURL: .*Fixture Home/,
    );
    const missing = await run.ok({ action: 'go_to_url', url: `${h.site.url}/no-such-page` });
    expect(missing).toMatch(/Title: Not Found {3}\(HTTP 404\)/);
  });

  it('switches to a tab the page opens (target=_blank, window.open), with stable tab ids', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: home() });
    const linked = await run.ok({ action: 'click_element', ref: refIn(state, 'Open a new tab') });
    expect(linked).toContain('Events: the action opened tab [1] and switched to it');
    expect(linked).toMatch(
      /Tabs: \[0\] Fixture Home — \/ \| \[1\]\* New Tab Page — http:\/\/127\.0\.0\.1:\d+\/tab\.html\?from=link/,
    );
    await run.ok({ action: 'switch_tab', tab_id: 0 });
    const opened = await run.ok({ action: 'click_element', ref: refIn(state, 'button "Open window"') });
    expect(opened).toContain('Events: the action opened tab [2] and switched to it');
    expect(opened).toContain('URL: http://127.0.0.1:');
    expect(opened).toContain('/tab.html?from=button');
    // Closing tab 1 does not renumber tab 2.
    const closed = await run.ok({ action: 'close_tab', tab_id: 1 });
    expect(closed).toMatch(/Tabs: \[0\] Fixture Home — \/ \| \[2\]\* New Tab Page/);
    expect(await run.fails({ action: 'switch_tab', tab_id: 1 })).toMatch(
      /^Error: switch_tab: there is no tab 1; the open tabs are 0, 2/,
    );
    const third = await run.ok({ action: 'open_tab', url: `${h.site.url}/page2.html` });
    expect(third).toMatch(/^Opened tab \[3\] with http:\/\/127\.0\.0\.1:\d+\/page2\.html\./);
    expect(third).toContain('[3]* Page Two');
    // The page closes its own tab: the state says so.
    await run.ok({ action: 'switch_tab', tab_id: 2 });
    const page = await run.ok({ action: 'get_current_state' });
    const closing = await run.ok({ action: 'click_element', ref: refIn(page, 'Close me') });
    expect(`${closing}\n${await run.ok({ action: 'get_current_state' })}`).toContain('tab [2] was closed by the page');
  });

  it('answers dialogs at once by default and says so (a forgotten dialog never hangs the run)', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: home() });
    const confirmed = await run.ok({ action: 'click_element', ref: refIn(state, 'Delete everything') });
    expect(confirmed).toContain('Events: confirm "Really delete?" was accepted automatically');
    expect(confirmed).toContain('"confirmed"');
    const greeted = await run.ok({ action: 'click_element', ref: refIn(state, 'Greet me') });
    expect(greeted).toContain('"Hello, nobody"');
    expect(await run.fails({ action: 'handle_dialog', accept: true })).toMatch(
      /^Error: handle_dialog: no dialog is open \(dialogs are answered automatically here/,
    );
  });

  it("with dialogs: 'ask', leaves a dialog open for handle_dialog, which answers prompts too", async () => {
    const run = await h.run(h.tool({ dialogs: 'ask' }));
    const state = await run.ok({ action: 'go_to_url', url: home() });
    const asked = await run.ok({ action: 'click_element', ref: refIn(state, 'Greet me') });
    expect(asked).toContain(
      'Dialog: prompt "Your name?" is open — call handle_dialog (accept true or false) before anything else',
    );
    expect(await run.fails({ action: 'click_element', ref: refIn(state, 'Save') })).toMatch(
      /^Error: A prompt dialog is open and blocks the page: call handle_dialog first\./,
    );
    const answered = await run.ok({ action: 'handle_dialog', accept: true, prompt_text: 'Ann' });
    expect(answered).toContain('Events: prompt "Your name?" was accepted');
    expect(answered).toContain('"Hello, Ann"');
    await run.ok({ action: 'click_element', ref: refIn(state, 'Delete everything') });
    expect(await run.ok({ action: 'handle_dialog', accept: false })).toContain('"cancelled"');
  });

  it('saves downloads into the workspace, never over an earlier file', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: home() });
    const first = await run.ok({ action: 'click_element', ref: refIn(state, 'Download report') });
    expect(first).toContain('Events: downloaded report.csv → downloads/report.csv (36 bytes)');
    const second = await run.ok({ action: 'go_to_url', url: `${h.site.url}/download/report.csv` });
    expect(second).toContain('downloaded report.csv → downloads/report (1).csv (36 bytes)');
    expect(await readFile(join(run.workspace, 'downloads', 'report.csv'), 'utf8')).toBe(
      'region,sales\nKansai,1200\nKanto,3400\n',
    );
    expect(await readFile(join(run.workspace, 'downloads', 'report (1).csv'), 'utf8')).toContain('Kansai');
  });

  it('reaches elements in a same-origin frame, a cross-origin frame and an open shadow root', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/frames.html?xport=${h.xsite.port}` });
    expect(state).toMatch(
      /- iframe \[ref=e\d+\]\n {2}- textbox "Inside frame" \[ref=f\d+e\d+\]\n {2}- button "Frame button" \[ref=f\d+e\d+\]\n- iframe \[ref=e\d+\]\n {2}- button "Cross button" \[ref=f\d+e\d+\]/,
    );
    await run.ok({ action: 'input_text', ref: refIn(state, 'Inside frame'), text: 'in a frame' });
    const framed = await run.ok({ action: 'click_element', ref: refIn(state, 'Frame button') });
    expect(framed).toContain('"frame clicked: in a frame"');
    const crossed = await run.ok({ action: 'click_element', ref: refIn(state, 'Cross button') });
    expect(crossed).toContain('button "Cross clicked"');
    await run.ok({ action: 'input_text', ref: refIn(state, 'Shadow field'), text: 'deep' });
    const shadowed = await run.ok({ action: 'click_element', ref: refIn(state, 'Shadow button') });
    expect(shadowed).toContain('"shadow clicked: deep"');
  });

  it('answers a stale ref at once with the fresh state, and the fresh refs work', async () => {
    // "At once": an answer that waited for the element would wait past the test's own time-out.
    const run = await h.run(h.tool({ actionTimeoutMs: 600_000 }));
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/spa.html` });
    const old = refIn(state, 'Done: Book train');
    const rerendered = await run.ok({ action: 'click_element', ref: refIn(state, 'Refresh list') });
    expect(rerendered).toMatch(/3 new \(\*\), 3 gone/);
    const stale = await run.fails({ action: 'click_element', ref: old });
    expect(stale).toMatch(
      new RegExp(
        `^Error: ref ${old} is not on the page any more \\(it changed since the state you saw\\): use a ref from this state\\.\\n\\n<page_content untrusted="true">\\nURL: `,
      ),
    );
    const fresh = refIn(stale, 'Done: Book train');
    expect(fresh).not.toBe(old);
    expect(await run.ok({ action: 'click_element', ref: fresh })).toContain('"Book train done (list v2)"');
    // A ref from another document fails as fast.
    await run.ok({ action: 'go_to_url', url: `${h.site.url}/page2.html` });
    expect(await run.fails({ action: 'click_element', ref: fresh })).toContain('is not on the page any more');
  });

  it('names the overlay that takes a click, and the click works once it is gone', async () => {
    // The covered click must run out of time; the others have the harness's.
    const run = await h.run(h.tool({ actionTimeoutMs: 3000 }));
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/overlay.html` });
    const covered = await run.fails({ action: 'click_element', ref: refIn(state, 'Buy now') });
    expect(covered).toMatch(
      /^Error: click_element: button "Buy now" \[ref=e\d+\] is covered by <div id="banner">…<\/div>, which takes the click/,
    );
    await run.ok({ action: 'click_element', ref: refIn(state, 'Accept cookies') });
    expect(await run.ok({ action: 'click_element', ref: refIn(state, 'Buy now') })).toContain('"Bought!"');
  });

  it('waits for the requests a click starts (a slow XHR) before reporting', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/slow.html` });
    const loaded = await run.ok({ action: 'click_element', ref: refIn(state, 'Load data') });
    expect(loaded).toContain('* button "Show 42 items"');
  });

  it('scrolls by screens and to text, and finds text anywhere on a long page at no model cost', async () => {
    const run = await h.run();
    const top = await run.ok({ action: 'go_to_url', url: `${h.site.url}/rows.html` });
    expect(top).toContain('Scroll: 0 px above');
    expect(top).not.toContain('Item 200');
    const found = await run.ok({ action: 'find', text: 'Item 200' });
    expect(found).toMatch(/^\d+ lines? on the page match the text "Item 200":\n/);
    expect(found).toMatch(/- link "Item 200" \[ref=e\d+\]/);
    const down = await run.ok({ action: 'scroll_down' });
    expect(down).toMatch(/^Scrolled down by 800 pixels\.\n\n/);
    expect(down).toContain('Scroll: 800 px above');
    const there = await run.ok({ action: 'scroll_to_text', text: 'Item 300' });
    expect(there).toContain('link "Item 300"');
    expect(await run.ok({ action: 'scroll_up', scroll_amount: 100 })).toMatch(/^Scrolled up by 100 pixels\./);
    expect(await run.fails({ action: 'scroll_to_text', text: 'Item 9999' })).toMatch(
      /^Error: scroll_to_text: there is no text "Item 9999" on the page/,
    );
  });

  it('lists and picks options of native and ARIA dropdowns, hovers, types keys and uploads from the workspace', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/selects.html` });
    expect(state).toContain('combobox "Country" [ref=');
    expect(state).toContain(': 12 options, "Japan" selected (get_dropdown_options lists them)');
    const options = await run.ok({ action: 'get_dropdown_options', ref: refIn(state, 'Country') });
    expect(options).toContain('10: "Kenya"');
    expect(options).toContain('9: "Japan" [selected]');
    expect(await run.ok({ action: 'select_dropdown_option', ref: refIn(state, 'Country'), text: 'Kenya' })).toContain(
      '"Country Kenya"',
    );
    expect(await run.fails({ action: 'select_dropdown_option', ref: refIn(state, 'Country'), text: 'Mars' })).toMatch(
      /has no option "Mars"; its options: "Argentina", "Brazil"/,
    );
    const opened = await run.ok({ action: 'get_dropdown_options', ref: refIn(state, 'Fruit') });
    expect(opened).toContain('* option "Banana"');
    expect(await run.ok({ action: 'select_dropdown_option', ref: refIn(state, 'Fruit'), text: 'Banana' })).toContain(
      '"Chose Banana"',
    );
    expect(await run.ok({ action: 'hover', ref: refIn(state, 'button "Products"') })).toContain('* link "Widgets"');
    await writeFile(join(run.workspace, 'notes.txt'), 'kyoto notes');
    const uploaded = await run.ok({ action: 'upload_file', ref: refIn(state, 'Attachment'), path: 'notes.txt' });
    expect(uploaded).toMatch(/^Uploaded notes\.txt \(11 bytes\) with button "Attachment"/);
    expect(uploaded).toContain('"Uploaded notes.txt: kyoto notes"');
    const keys = await run.ok({ action: 'send_keys', keys: 'Tab Tab' });
    expect(keys).toMatch(/^Sent keys: Tab Tab\./);
    expect(await run.fails({ action: 'send_keys', keys: 'NoSuchKey' })).toMatch(
      /^Error: send_keys: failed: .*Unknown key/,
    );
  });

  it('waits for seconds, for text, and says when the text never came', async () => {
    const run = await h.run();
    const state = await run.ok({ action: 'go_to_url', url: `${h.site.url}/slow.html` });
    expect(await run.ok({ action: 'wait', seconds: 0.1 })).toMatch(/^Waited for 0\.1 seconds\./);
    expect(await run.ok({ action: 'wait', text: 'Slow data' })).toMatch(/^Waited for "Slow data" to appear\./);
    expect(await run.fails({ action: 'wait', text: 'never there', seconds: 0.3 })).toMatch(
      /^Error: wait: "never there" did not appear within 0\.3 s/,
    );
    expect(state).toContain('Load data');
  });

  it('takes screenshots (viewport JPEG) on request, and with vision on every result', async () => {
    const direct = await h.direct(h.tool());
    await direct.call({ action: 'go_to_url', url: home() });
    const shot = await direct.call({ action: 'screenshot' });
    expect(shot).toMatchObject({
      output: expect.stringMatching(/^Screenshot of the viewport of http:\/\/127/),
      image: { mimeType: 'image/jpeg' },
    });
    const jpeg = Buffer.from((shot as { image: { base64: string } }).image.base64, 'base64');
    expect(jpeg.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    expect(jpeg.length).toBeLessThan(60_000);
    // Without vision, a result has no image; a page state comes with its brief (what the action did).
    expect(await direct.call({ action: 'get_current_state' })).toEqual({
      output: expect.stringMatching(/^<page_content untrusted="true">\nURL: http:\/\/127/),
      brief:
        'Read the page state.\n[the page state after this action is left out: the current one follows while the browser is in use]',
    });
    const vision = await h.direct(h.tool({ vision: true }));
    expect(await vision.call({ action: 'go_to_url', url: home() })).toMatchObject({
      output: expect.stringContaining('Title: Fixture Home'),
      image: { mimeType: 'image/jpeg' },
    });
  });

  it("gives a host the run's session: its page state and a screenshot, after the action in progress", async () => {
    const direct = await h.direct(h.tool());
    const state = await direct.call({ action: 'go_to_url', url: home() });
    // What the observation shrinks to in memory: the action and the page it left, no state.
    expect(state).toMatchObject({
      output: expect.stringContaining('Title: Fixture Home'),
      brief: `Navigated to ${home()}.\nThe tab was then on ${home()}.\n[the page state after this action is left out: the current one follows while the browser is in use]`,
    });
    const session = await direct.session();
    const text = 'typed while the host asked';
    const typing = direct.call({
      action: 'input_text',
      ref: refIn((state as ToolOutput).output, 'textbox "Name"'),
      text,
      slowly: true,
    });
    // Asked while the typing is under way (it takes about half a second).
    await new Promise((resolve) => setTimeout(resolve, 150));
    const seen = await session.state();
    await typing;
    expect(seen).toMatch(/^<page_content untrusted="true">\nURL: http:\/\/127\.0\.0\.1:\d+\/ {3}Title: Fixture Home/);
    expect(seen).toContain(`"${text}"`);
    expect((await session.screenshot()).mimeType).toBe('image/jpeg');
  });

  it('extract_content: the main content as Markdown, one forced call of the run model, continued by offset', async () => {
    const llm = scriptedLlm([
      {
        toolCalls: [{ name: 'extract_content', arguments: { extracted_content: 'Kinkaku-ji: 9:00–17:00, 500 yen.' } }],
      },
      { toolCalls: [{ name: 'extract_content', arguments: { extracted_content: 'Fushimi Inari is free.' } }] },
    ]);
    const run = await h.run(h.tool({ maxContentLength: 300 }), { llm });
    await run.ok({ action: 'go_to_url', url: `${h.site.url}/travel/kyoto.html` });
    const first = await run.ok({ action: 'extract_content', goal: 'opening hours and prices' });
    expect(first).toMatch(
      /^Extracted from http:\/\/127\.0\.0\.1:\d+\/travel\/kyoto\.html \(characters 0–\d+ of \d+\):\n<page_content untrusted="true">\nKinkaku-ji: 9:00–17:00, 500 yen\.\n<\/page_content>\n\[The page goes on: extract_content with start_from_char=(\d+) reads the next part\.\]$/,
    );
    const next = Number(/start_from_char=(\d+)/.exec(first)?.[1]);
    const [request] = llm.requests;
    expect(request?.toolChoice).toBe('required');
    expect(request?.tools.map((tool) => tool.name)).toEqual(['extract_content']);
    const userText = (index: number) => String(llm.requests[index]?.messages.find((m) => m.role === 'user')?.content);
    const prompt = userText(0);
    expect(prompt).toContain('Goal: opening hours and prices');
    expect(prompt).toContain('## Kinkaku-ji');
    expect(prompt).not.toMatch(/<p>|<h2>/);
    // The navigation is not main content.
    expect(prompt).not.toContain('[Home]');
    const second = await run.ok({ action: 'extract_content', goal: 'prices', start_from_char: next });
    expect(second).toContain(`(characters ${next}–`);
    expect(second).toContain('Fushimi Inari is free.');
    expect(userText(1)).toContain('vermilion torii gates climb Mount Inari');
    expect(userText(1)).not.toContain('## Kinkaku-ji');
    llm.assertConsumed();
    expect(await run.fails({ action: 'extract_content', goal: 'x', start_from_char: 99_999 })).toMatch(
      /^Error: extract_content: start_from_char 99999 is past the end of the content/,
    );
  });

  it('web_search: searches with the injected search, opens the first result; no results is a clear answer', async () => {
    const searched: string[] = [];
    const tool = h.tool({
      search: async (query) => {
        searched.push(query);
        if (query === 'nothing')
          return err({ message: 'All search engines failed: google: no results', failures: [], cancelled: false });
        return ok({
          query,
          engine: 'google',
          lang: 'en',
          country: 'us',
          failures: [],
          results: [
            { title: 'Kyoto guide', url: `${h.site.url}/travel/kyoto.html` },
            { title: 'Nara guide', url: `${h.site.url}/travel/nara.html` },
          ],
        });
      },
    });
    const run = await h.run(tool);
    const result = await run.ok({ action: 'web_search', query: 'kyoto temples' });
    expect(result).toMatch(
      /^Searched for "kyoto temples" \(google\):\n1\. Kyoto guide — http:\/\/127\.0\.0\.1:\d+\/travel\/kyoto\.html\n2\. Nara guide — .*\nOpened the first result, .*kyoto\.html\.\n\n<page_content untrusted="true">\nURL: .*Title: Kyoto: temples and gardens/,
    );
    expect(await run.fails({ action: 'web_search', query: 'nothing' })).toMatch(
      /^Error: web_search: the search for "nothing" gave no results: All search engines failed: google: no results/,
    );
    expect(searched).toEqual(['kyoto temples', 'nothing']);
  });

  it('refuses a call with a missing or wrong parameter, naming it, without touching the browser', async () => {
    const run = await h.run();
    expect(await run.call({ action: 'input_text', ref: 'e5' })).toEqual({
      output: expect.stringContaining('input_text: text is required.'),
      isError: true,
    });
    expect((await run.call({ action: 'click_element', index: 4 })).output).toContain('takes ref');
  });
});
