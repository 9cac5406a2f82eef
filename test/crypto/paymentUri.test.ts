import fc from 'fast-check';
import { bip21Amount, ethToWei, paymentUri } from '../../src/cryptocurrency/paymentUri';
import { BTC_BECH32, ETH_EIP55 } from './helpers';

describe('payment URIs', () => {
  it('BIP 21 for BTC: decimal BTC without trailing zeros', () => {
    expect(paymentUri('BTC', BTC_BECH32, '0.00200000')).toBe(`bitcoin:${BTC_BECH32}?amount=0.002`);
    expect(paymentUri('BTC', BTC_BECH32, '1')).toBe(`bitcoin:${BTC_BECH32}?amount=1`);
    expect(paymentUri('BTC', BTC_BECH32, '0.00000001')).toBe(`bitcoin:${BTC_BECH32}?amount=0.00000001`);
    expect(paymentUri('BTC', BTC_BECH32, null)).toBe(`bitcoin:${BTC_BECH32}`);
  });

  it('EIP-681 for ETH: the value in wei as a plain integer', () => {
    expect(paymentUri('ETH', ETH_EIP55, '0.0326')).toBe(`ethereum:${ETH_EIP55}?value=32600000000000000`);
    expect(paymentUri('ETH', ETH_EIP55, '1')).toBe(`ethereum:${ETH_EIP55}?value=1000000000000000000`);
    expect(paymentUri('ETH', ETH_EIP55, null)).toBe(`ethereum:${ETH_EIP55}`);
  });

  it('wei is exact for every amount with up to 18 decimals, never in exponent notation', () => {
    expect(ethToWei('0.000000000000000001')).toBe('1');
    expect(ethToWei('123456789012345.123456789012345678')).toBe('123456789012345123456789012345678');
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 30n }), (wei) => {
        const s = wei.toString().padStart(19, '0');
        const eth = `${s.slice(0, -18)}.${s.slice(-18)}`.replace(/^0+(?=\d)/, '');
        expect(ethToWei(eth)).toBe(wei.toString());
      }),
    );
  });

  it('refuses amounts the currency cannot hold', () => {
    expect(() => bip21Amount('0.000000001')).toThrow(RangeError);
    expect(() => ethToWei('0.0000000000000000001')).toThrow(RangeError);
    expect(() => paymentUri('BTC', BTC_BECH32, '-1')).toThrow(RangeError);
    expect(() => paymentUri('ETH', ETH_EIP55, '1e3')).toThrow(RangeError);
  });
});
