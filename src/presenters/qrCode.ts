/** QR codes as SVG, made here (the `qrcode` package) so no third party sees a customer's payment URI. */
import QRCode from 'qrcode';

/** Medium error correction and the standard 4-module quiet zone: scans from a phone screen. */
export function qrCodeSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 4, color: { dark: '#000000', light: '#ffffff' } });
}
