// Kyoto Journeys: the cookie-consent dialog, "Show more" buttons, the search page's filter and
// the print button. No external requests.
const CONSENT_COOKIE = 'kyoto_consent';

function hasConsent() {
  return document.cookie.split('; ').some((entry) => entry.startsWith(`${CONSENT_COOKIE}=`));
}

/** On a first visit, a dialog over the whole page that must be answered before anything else. */
function showConsent() {
  if (hasConsent()) return;
  const backdrop = document.createElement('div');
  backdrop.className = 'consent-backdrop';
  backdrop.innerHTML = `
    <section class="consent" role="dialog" aria-modal="true" aria-labelledby="consent-title" aria-describedby="consent-text">
      <h2 id="consent-title">Cookies on Kyoto Journeys</h2>
      <p id="consent-text">We use cookies to remember your choices and to count visits. Please choose before you continue.</p>
      <div class="consent-actions">
        <button type="button" class="button" data-consent="all">Accept all cookies</button>
        <button type="button" class="button secondary" data-consent="necessary">Necessary cookies only</button>
      </div>
    </section>`;
  for (const button of backdrop.querySelectorAll('[data-consent]')) {
    button.addEventListener('click', () => {
      // biome-ignore lint/suspicious/noDocumentCookie: a consent banner sets a cookie; the Cookie Store API is not in every browser.
      document.cookie = `${CONSENT_COOKIE}=${button.dataset.consent}; path=/; max-age=31536000; SameSite=Lax`;
      backdrop.remove();
    });
  }
  document.body.append(backdrop);
  backdrop.querySelector('button').focus();
}

/** A button with data-reveal="id" shows or hides the element with that id. */
function setUpShowMore() {
  for (const button of document.querySelectorAll('[data-reveal]')) {
    const target = document.getElementById(button.dataset.reveal);
    if (!target) continue;
    const label = button.textContent;
    button.addEventListener('click', () => {
      target.hidden = !target.hidden;
      button.setAttribute('aria-expanded', String(!target.hidden));
      button.textContent = target.hidden ? label : 'Show fewer';
    });
  }
}

/** The search page: keeps the results that contain every word of ?q=. */
function setUpSearch() {
  const results = document.getElementById('results');
  const summary = document.getElementById('search-summary');
  if (!results || !summary) return;
  const query = (new URLSearchParams(location.search).get('q') ?? '').trim();
  const input = document.getElementById('q');
  if (input) input.value = query;
  if (!query) return;
  const words = query.toLowerCase().split(/\s+/);
  let shown = 0;
  for (const item of results.children) {
    const text = `${item.textContent} ${item.dataset.terms ?? ''}`.toLowerCase();
    item.hidden = !words.every((word) => text.includes(word));
    if (!item.hidden) shown += 1;
  }
  summary.textContent =
    shown === 0
      ? `No results for “${query}”. Try “temple”, “pass” or “festival”.`
      : `${shown} result${shown === 1 ? '' : 's'} for “${query}”:`;
}

function setUpPrint() {
  for (const button of document.querySelectorAll('[data-print]')) {
    button.addEventListener('click', () => window.print());
  }
}

showConsent();
setUpShowMore();
setUpSearch();
setUpPrint();
