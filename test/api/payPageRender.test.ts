/** The pay page's HTML from a view, without a browser: escaping, states, the CSP. */
import { payPageContentSecurityPolicy, renderPayPage, scriptIntegrity } from '../../src/presenters/payPage';
import type { OpenPublicLink } from '../../src/presenters/payPage';

const script = { path: '/pay/assets/payPage.abc.js', integrity: scriptIntegrity('void 0;') };
const api = '/v1/public/payment_claim_links/s3cret';

function view(over: Partial<OpenPublicLink> = {}): OpenPublicLink {
  return {
    object: 'payment_claim_link',
    status: 'active',
    usable: true,
    expired: false,
    expires_at: '2027-01-02T03:04:05.000Z',
    max_uses: 1,
    use_count: 0,
    price: null,
    amount_due: '100.00',
    invoices: [{ id: 'inv_<b>', status: 'pending', due_date: '2027-01-01', total_amount: '100.00', amount_due: '100.00' }],
    payment_status: { state: 'waiting', confirmations: null, confirmations_required: null },
    pay_to: [
      {
        currency: 'BTC',
        address: 'bc1q"x',
        explorer: { name: 'mempool.space', url: 'https://mempool.space/address/x' },
        amount: '0.002',
        payment_uri: 'bitcoin:bc1qx?amount=0.002',
        qr_code_url: '/pay/s3cret/qr.svg?address=bc1qx&amount=0.002',
      },
    ],
    quotes: [{ currency: 'BTC', usd_price: '50000.00', amount: '0.002' }],
    verification_required: true,
    challenge: null,
    ...over,
  } as OpenPublicLink;
}

describe('renderPayPage', () => {
  it('renders what to pay with everything escaped, and the script by file only', () => {
    const html = renderPayPage(view(), script, api);
    expect(html).toContain('inv_&lt;b>');
    expect(html).not.toContain('<b>');
    expect(html).toContain('bc1q&quot;x');
    expect(html).toContain('<time id="expires-at" datetime="2027-01-02T03:04:05.000Z">2027-01-02 03:04 UTC</time>');
    expect(html).toContain('<span class="estimate">estimate</span>');
    expect(html).toContain('src="/pay/s3cret/qr.svg?address=bc1qx&amp;amount=0.002"');
    expect(html).toContain(`<script src="/pay/assets/payPage.abc.js" integrity="${script.integrity}" defer></script>`);
    expect(html).not.toMatch(/<script>/);
    expect(html).toContain('Waiting for your payment.');
  });

  it('a price link shows the price as what is due, not the invoices', () => {
    const html = renderPayPage(view({ price: { id: 'price_1', amount: '25.00', currency: 'usd' }, amount_due: '25.00' }), script, api);
    expect(html).toContain('Price: <strong>25.00 USD</strong>');
    expect(html).toContain('<span id="amount-due">25.00</span> USD');
    expect(html).not.toContain('id="invoices"');
  });

  it('a paid link says so and hides how to pay and the form', () => {
    const html = renderPayPage(view({ payment_status: { state: 'paid', confirmations: null, confirmations_required: null } }), script, api);
    expect(html).toContain('<title>Paid</title>');
    expect(html).toMatch(/<section id="pay"[^>]* hidden>/);
    expect(html).toMatch(/<form id="claim-form"[^>]* hidden>/);
  });

  it('a closed or unknown link: its message, no data and no script', () => {
    const used = renderPayPage({ object: 'payment_claim_link', status: 'used', usable: false, expired: false }, script, api);
    expect(used).toContain('already been used');
    expect(used).not.toContain('<script');
    expect(renderPayPage({ object: 'payment_claim_link', status: 'expired', usable: false, expired: true }, script, api)).toContain('has expired');
    expect(renderPayPage(null, script, api)).toContain('does not exist');
  });

  it('the CSP allows that one script file, by hash and by URL, and no inline script', () => {
    const csp = payPageContentSecurityPolicy('https://pay.example.com', script);
    expect(csp).toContain(`script-src '${script.integrity}' https://pay.example.com/pay/assets/payPage.abc.js;`);
    expect(csp).not.toContain('unsafe');
  });
});
