import { describe, it } from 'vitest';
import { browserHarness, chromePath, refIn } from './harness.js';

const chrome = chromePath();
describe.skipIf(!chrome)('smoke', () => {
  const h = browserHarness(chrome ?? '');
  it('works', async () => {
    const run = await h.run(h.tool({ dialogs: 'ask' }));
    let last = '';
    const log = async (args: Record<string, unknown>) => {
      const r = await run.call(args);
      last += `\n${r.output}`;
      console.log(`>>> ${JSON.stringify(args)} ${r.isError ? 'ERROR' : ''}\n${h.normalize(r.output)}`);
    };
    const click = (label: string) => log({ action: 'click_element', ref: refIn(last, label) });
    await log({ action: 'go_to_url', url: `${h.site.url}/` });
    await click('Download report');
    await click('Delete everything');
    await click('Save');
    await log({ action: 'handle_dialog', accept: false });
    await click('Save');
    await log({ action: 'handle_dialog', accept: true });
    await click('Greet me');
    await log({ action: 'handle_dialog', accept: true, prompt_text: 'Ann' });
    await log({ action: 'find', text: 'Hello' });
    await log({ action: 'go_to_url', url: `${h.site.url}/spa.html` });
    const stale = refIn(last, 'Done: Book');
    await click('Refresh list');
    await log({ action: 'click_element', ref: stale });
    await log({ action: 'go_to_url', url: `${h.site.url}/overlay.html` });
    await click('Buy now');
    await click('Accept cookies');
    await log({ action: 'go_to_url', url: `${h.site.url}/slow.html` });
    await click('Load data');
    await log({ action: 'go_to_url', url: `${h.site.url}/selects.html` });
    await log({ action: 'get_dropdown_options', ref: refIn(last, 'Country') });
    await log({ action: 'select_dropdown_option', ref: refIn(last, 'Country'), text: 'Kenya' });
    await log({ action: 'get_dropdown_options', ref: refIn(last, 'Fruit') });
    await log({ action: 'select_dropdown_option', ref: refIn(last, 'Fruit'), text: 'Banana' });
    await log({ action: 'go_to_url', url: `${h.site.url}/rows.html` });
    await log({ action: 'find', text: 'Item 42' });
    await log({ action: 'scroll_down' });
  });
});
