/**
 * `GET /pay/<secret>`: the customer's payment page. A static HTML form on the two public
 * calls: it loads what to pay and where (with the ALTCHA challenge), solves the proof of work
 * in the browser (Web Crypto SHA-256), and submits the claim.
 */
import type Router from '@koa/router';
import type { AppState, Ctx } from '../context';
import { paymentClaimLinkExists } from '../../services/paymentClaimLinks';
import type { RouteDeps } from '../app';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Payment</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
  h1 { font-size: 1.4rem; }
  .box { border: 1px solid #ccc; border-radius: 6px; padding: 1rem; margin: 1rem 0; }
  .addr { font-family: monospace; word-break: break-all; }
  label { display: block; margin-top: .8rem; font-weight: 600; }
  input, select { width: 100%; padding: .4rem; font-size: 1rem; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .6rem 1.2rem; font-size: 1rem; }
  .error { color: #a00; }
  .ok { color: #070; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Payment</h1>
<p id="loading">Loading…</p>
<div id="unusable" class="box error" role="alert" hidden></div>
<div id="details" hidden>
  <div class="box">
    <p>Amount due: <strong id="amount-due"></strong> USD</p>
    <ul id="quotes"></ul>
    <p>Send the payment to one of these addresses:</p>
    <ul id="addresses"></ul>
    <p><small>This link expires <span id="expires"></span>.</small></p>
  </div>
  <form id="claim-form" class="box">
    <p>After you have sent the payment, tell us about it:</p>
    <label for="currency">Currency</label>
    <select id="currency" name="currency" required></select>
    <label for="to_address">Sent to address</label>
    <select id="to_address" name="to_address" required></select>
    <label for="amount">Amount sent</label>
    <input id="amount" name="amount" inputmode="decimal" placeholder="0.015" required>
    <label for="transaction_id">Transaction hash</label>
    <input id="transaction_id" name="transaction_id" required autocomplete="off">
    <button id="submit" type="submit">Submit payment claim</button>
    <p id="form-error" class="error" role="alert" hidden></p>
  </form>
</div>
<div id="done" class="box ok" role="status" hidden></div>
<script>
(function () {
  var secret = decodeURIComponent(location.pathname.split('/').pop() || '');
  var api = '/v1/public/payment_claim_links/' + encodeURIComponent(secret);
  var data = null;
  function $(id) { return document.getElementById(id); }
  function show(id, text) { var el = $(id); if (text !== undefined) el.textContent = text; el.hidden = false; }
  function hex(buf) { return Array.prototype.map.call(new Uint8Array(buf), function (b) { return b.toString(16).padStart(2, '0'); }).join(''); }
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
  function unusableText(d) {
    if (d.status === 'expired' || d.expired) return 'This payment link has expired. Please ask for a new link.';
    if (d.status === 'used') return 'This payment link has already been used. Please ask for a new link.';
    return 'This payment link can no longer be used.';
  }
  function fillAddresses() {
    var cur = $('currency').value, sel = $('to_address');
    sel.innerHTML = '';
    data.pay_to.filter(function (a) { return a.currency === cur; }).forEach(function (a) {
      var o = document.createElement('option'); o.value = a.address; o.textContent = a.address; sel.appendChild(o);
    });
  }
  async function load() {
    var res = await fetch(api, { headers: { Accept: 'application/json' } });
    $('loading').hidden = true;
    if (res.status === 404) { show('unusable', 'This payment link does not exist.'); return; }
    if (!res.ok) { show('unusable', 'The payment page is unavailable right now. Please try again later.'); return; }
    data = await res.json();
    if (!data.usable) { show('unusable', unusableText(data)); return; }
    $('amount-due').textContent = data.amount_due;
    $('expires').textContent = new Date(data.expires_at).toLocaleString();
    data.quotes.forEach(function (q) {
      var li = document.createElement('li'); li.textContent = 'about ' + q.amount + ' ' + q.currency + ' (1 ' + q.currency + ' = ' + q.usd_price + ' USD)'; $('quotes').appendChild(li);
    });
    var currencies = [];
    data.pay_to.forEach(function (a) {
      var li = document.createElement('li');
      var code = document.createElement('span'); code.className = 'addr'; code.textContent = a.address;
      var link = document.createElement('a'); link.href = a.explorer.url; link.rel = 'noopener noreferrer'; link.target = '_blank'; link.textContent = a.explorer.name;
      li.append(a.currency + ': ', code, ' (', link, ')');
      $('addresses').appendChild(li);
      if (currencies.indexOf(a.currency) < 0) currencies.push(a.currency);
    });
    currencies.forEach(function (c) { var o = document.createElement('option'); o.value = c; o.textContent = c; $('currency').appendChild(o); });
    $('currency').addEventListener('change', fillAddresses);
    fillAddresses();
    show('details');
  }
  $('claim-form').addEventListener('submit', async function (ev) {
    ev.preventDefault();
    $('form-error').hidden = true;
    $('submit').disabled = true;
    $('submit').textContent = 'Verifying…';
    try {
      var verification = data.challenge ? await solve(data.challenge) : undefined;
      var body = { currency: $('currency').value, to_address: $('to_address').value, amount: $('amount').value.trim(), transaction_id: $('transaction_id').value.trim(), verification: verification };
      var res = await fetch(api + '/claims', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
      var out = await res.json().catch(function () { return {}; });
      if (res.status === 201) {
        $('details').hidden = true;
        show('done', 'Thank you. Your payment claim was received (reference ' + out.id + ') and will be reviewed.');
        return;
      }
      var msg = (out.error && out.error.message) || 'The claim could not be submitted.';
      if (out.error && out.error.code === 'verification_failed') {
        var fresh = await fetch(api).then(function (r) { return r.json(); }).catch(function () { return null; });
        if (fresh) data.challenge = fresh.challenge;
      }
      show('form-error', msg);
    } catch (e) {
      show('form-error', e.message || 'The claim could not be submitted.');
    }
    $('submit').disabled = false;
    $('submit').textContent = 'Submit payment claim';
  });
  load().catch(function () { $('loading').hidden = true; show('unusable', 'The payment page is unavailable right now. Please try again later.'); });
})();
</script>
</body>
</html>
`;

// Each load looks a secret up: the same per-IP rate as the public claim routes it calls.
export function payPageRoutes(router: Router<AppState>, { payPageLimit: limit }: RouteDeps) {
  router.get('/pay/:secret', limit, async (ctx: Ctx) => {
    // The same page either way (it explains what is wrong); the status tells crawlers and tools.
    ctx.status = (await paymentClaimLinkExists(ctx.params.secret)) ? 200 : 404;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Content-Security-Policy', "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    ctx.body = PAGE;
  });
}
