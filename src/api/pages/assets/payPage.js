/*
 * The payment pages' script (served as a file: the pages' CSP allows no inline script): a claim
 * link's pay page (src/presenters/payPage.tsx) and an invoice's hosted page (invoicePage.tsx).
 * Each page is complete without it; this adds copy buttons, live status by polling the page's
 * public endpoint (`data-api`), and, where the page has them, a countdown to expiry and the
 * claim form with the ALTCHA proof of work it needs.
 */
(function () {
  'use strict';
  var root = document.getElementById('pay-page');
  if (!root) return;
  var api = root.getAttribute('data-api');
  var expiresAt = Date.parse(root.getAttribute('data-expires-at'));
  // The page's own words for a link that stopped working (else the pay page's).
  var missingText = root.getAttribute('data-missing-text') || 'This payment link does not exist. Please check the address or ask for a new link.';
  var closedText = root.getAttribute('data-closed-text');
  var paidTitle = root.getAttribute('data-paid-title') || 'Paid';
  // Often enough to feel live, well under the public routes' 60 requests a minute per IP.
  var POLL_MS = 5000;
  var data = null;
  var pollTimer = null;
  var submitted = false;

  function $(id) { return document.getElementById(id); }
  function show(el, text) { if (text !== undefined) el.textContent = text; el.hidden = false; }
  function hide(id) { var el = $(id); if (el) el.hidden = true; }

  // ---- copy buttons ------------------------------------------------------------------------
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // Plain HTTP: the clipboard API is not there; the selection still copies.
    return new Promise(function (resolve, reject) {
      var ta = document.createElement('textarea');
      ta.value = text; ta.setAttribute('readonly', ''); ta.className = 'sr-only';
      document.body.appendChild(ta); ta.select();
      var ok = document.execCommand('copy');
      document.body.removeChild(ta);
      if (ok) resolve(); else reject(new Error('copy failed'));
    });
  }
  function wireCopyButtons() {
    Array.prototype.forEach.call(document.querySelectorAll('button.copy'), function (btn) {
      btn.hidden = false;
      btn.addEventListener('click', function () {
        var source = $(btn.getAttribute('data-copy'));
        var what = btn.getAttribute('data-label').replace(/^Copy /, '');
        copyText(source.textContent.trim()).then(function () {
          btn.textContent = 'Copied';
          btn.setAttribute('data-copied', '');
          $('copy-status').textContent = 'The ' + what + ' was copied.';
          setTimeout(function () { btn.textContent = btn.getAttribute('data-label'); btn.removeAttribute('data-copied'); }, 2500);
        }, function () {
          $('copy-status').textContent = 'Could not copy the ' + what + '; select it and copy it by hand.';
        });
      });
    });
  }

  // ---- countdown ---------------------------------------------------------------------------
  function two(n) { return (n < 10 ? '0' : '') + n; }
  function tick() {
    var left = Math.floor((expiresAt - Date.now()) / 1000);
    if (left <= 0) { close('This payment link has expired. Please ask for a new link.'); return; }
    var d = Math.floor(left / 86400), hh = Math.floor(left % 86400 / 3600), mm = Math.floor(left % 3600 / 60), ss = left % 60;
    $('countdown').textContent = ' (in ' + (d ? d + ' d ' : '') + hh + ' h ' + two(mm) + ' min ' + two(ss) + ' s)';
    setTimeout(tick, 1000);
  }

  // ---- live status -------------------------------------------------------------------------
  // The same words as src/cryptocurrency/paymentStatus.ts paymentStatusText (the page is first rendered with those).
  function statusText(s) {
    if (s.state === 'paid') return 'Paid. Thank you: this payment is complete.';
    if (s.state === 'detected') return 'Payment detected (' + s.confirmations + ' of ' + s.confirmations_required + ' confirmations). It is final once it has ' + s.confirmations_required + '.';
    return 'Waiting for your payment.';
  }
  function close(message) {
    clearTimeout(pollTimer);
    pollTimer = null;
    if (submitted) return; // The thank-you stays: the link was used by this very claim.
    hide('pay');
    hide('claim-form');
    hide('earlier');
    hide('status');
    show($('unusable'), message);
  }
  function renderInvoices(invoices) {
    var body = document.querySelector('#invoices tbody');
    if (!body) return;
    body.textContent = '';
    invoices.forEach(function (i) {
      var tr = document.createElement('tr');
      tr.setAttribute('data-invoice-id', i.id);
      // As src/presenters/paymentPage.tsx invoiceAmount renders it.
      var amount = i.status === 'paid' ? i.total_amount + ' USD, paid' : i.amount_due === i.total_amount ? i.total_amount + ' USD' : i.total_amount + ' USD, ' + i.amount_due + ' USD due';
      [i.id, i.due_date, amount].forEach(function (text, n) {
        var td = document.createElement('td'); td.textContent = text; td.className = n === 0 ? 'id' : n === 2 ? 'num' : ''; tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }
  function renderOptions(d) {
    d.pay_to.forEach(function (a, n) {
      var el = document.querySelector('[data-option="' + n + '"]');
      if (!el || el.getAttribute('data-address') !== a.address) return;
      var img = el.querySelector('img.qr');
      // A new estimate: new QR code, amount and wallet link together.
      if (img.getAttribute('src') !== a.qr_code_url) {
        img.setAttribute('src', a.qr_code_url);
        img.setAttribute('alt', a.amount ? 'QR code: pay about ' + a.amount + ' ' + a.currency + ' to ' + a.address : 'QR code: the ' + a.currency + ' address ' + a.address);
      }
      el.querySelector('a.wallet-link').setAttribute('href', a.payment_uri);
      var amount = el.querySelector('[data-field="amount"]');
      if (amount && a.amount) amount.textContent = a.amount;
      var rate = el.querySelector('[data-field="rate"]');
      var quote = d.quotes.filter(function (q) { return q.currency === a.currency; })[0];
      if (rate && quote) rate.textContent = 'Estimated from ' + d.amount_due + ' USD at 1 ' + a.currency + ' = ' + quote.usd_price + ' USD; this page updates it when the price changes.';
    });
  }
  function render(d) {
    var status = $('status');
    if (status.getAttribute('data-state') !== d.payment_status.state || d.payment_status.state === 'detected') {
      var text = statusText(d.payment_status);
      if ($('status-text').textContent !== text) $('status-text').textContent = text;
      status.setAttribute('data-state', d.payment_status.state);
    }
    var due = $('amount-due');
    if (due) due.textContent = d.amount_due;
    renderInvoices(d.invoices);
    renderOptions(d);
    if (d.payment_status.state === 'paid') {
      document.title = paidTitle;
      hide('pay');
      hide('claim-form');
      hide('earlier');
    }
  }
  function poll() {
    fetch(api, { headers: { Accept: 'application/json' }, cache: 'no-store' }).then(function (res) {
      if (res.status === 404) { close(missingText); return null; }
      if (!res.ok) return null; // Try again at the next poll.
      return res.json();
    }).then(function (d) {
      if (!d) return;
      if (!d.usable) {
        close(closedText || (d.expired ? 'This payment link has expired. Please ask for a new link.' : d.status === 'used' ? 'This payment link has already been used. Please ask for a new link.' : 'This payment link can no longer be used.'));
        return;
      }
      data = d;
      render(d);
    }).catch(function () { /* offline for a moment: the next poll tries again */ }).then(function () {
      if (pollTimer !== null && !(data && data.payment_status.state === 'paid')) pollTimer = setTimeout(poll, POLL_MS);
    });
  }

  // ---- claim form --------------------------------------------------------------------------
  function hex(buf) { return Array.prototype.map.call(new Uint8Array(buf), function (b) { return (b < 16 ? '0' : '') + b.toString(16); }).join(''); }
  async function solve(ch) {
    var enc = new TextEncoder();
    var max = ch.maxnumber || 1000000;
    for (var n = 0; n <= max; n++) {
      if (hex(await crypto.subtle.digest('SHA-256', enc.encode(ch.salt + n))) === ch.challenge) {
        return btoa(JSON.stringify({ algorithm: ch.algorithm, challenge: ch.challenge, number: n, salt: ch.salt, signature: ch.signature }));
      }
    }
    throw new Error('Could not complete the verification');
  }
  async function freshLink() {
    var res = await fetch(api, { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (!res.ok) throw new Error('The payment page is unavailable right now. Please try again later.');
    return res.json();
  }
  function filterAddresses() {
    var cur = $('currency').value, sel = $('to_address'), first = null;
    Array.prototype.forEach.call(sel.options, function (o) {
      var match = o.getAttribute('data-currency') === cur;
      o.hidden = !match; o.disabled = !match;
      if (match && first === null) first = o;
    });
    if (sel.selectedOptions[0] && sel.selectedOptions[0].disabled && first) sel.value = first.value;
  }
  function wireForm() {
    var form = $('claim-form');
    $('currency').addEventListener('change', filterAddresses);
    filterAddresses();
    form.addEventListener('submit', async function (ev) {
      ev.preventDefault();
      var error = $('form-error'), button = $('submit');
      error.hidden = true;
      button.disabled = true;
      button.textContent = 'Verifying…';
      try {
        var d = data && data.challenge ? data : await freshLink();
        if (!d.usable) throw new Error('This payment link can no longer be used.');
        var verification = d.challenge ? await solve(d.challenge) : undefined;
        var body = { currency: $('currency').value, to_address: $('to_address').value, amount: $('amount').value.trim(), transaction_id: $('transaction_id').value.trim(), verification: verification };
        var res = await fetch(api + '/claims', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        var out = await res.json().catch(function () { return {}; });
        if (data) data.challenge = null; // Spent (or refused): the next try fetches a new one.
        if (res.status === 201) {
          submitted = true;
          clearTimeout(pollTimer);
          pollTimer = null;
          form.hidden = true;
          show($('done'), 'Thank you. Your payment claim was received (reference ' + out.id + ') and will be reviewed.');
          return;
        }
        show(error, (out.error && out.error.message) || 'The claim could not be submitted.');
      } catch (e) {
        show(error, e.message || 'The claim could not be submitted.');
      }
      button.disabled = false;
      button.textContent = 'Submit payment claim';
    });
  }

  wireCopyButtons();
  if ($('claim-form')) wireForm();
  var localTime = $('expires-at');
  if (localTime) localTime.textContent = new Date(expiresAt).toLocaleString();
  if ($('countdown')) tick();
  pollTimer = setTimeout(poll, 0);
})();
